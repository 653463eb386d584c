import { useMemo, useState } from 'preact/hooks';
import { clientFor, storeCredential, storedCredential, type Credential } from './api.js';
import { AgentPage } from './pages/agent.js';
import { AgentsPage } from './pages/agents.js';
import { AttachmentsPage } from './pages/attachments.js';
import { EvalRunPage } from './pages/eval-run.js';
import { ExplorerPage } from './pages/explorer.js';
import { AuditPage, QuotasPage } from './pages/governance.js';
import { PlaygroundPage } from './pages/playground.js';
import { ManagePage, ResourceListPage, ResourcePage } from './pages/resources.js';
import { RunPage } from './pages/run.js';
import { RunsPage } from './pages/runs.js';
import { SessionPage, SessionsPage } from './pages/sessions.js';
import { SignIn } from './pages/sign-in.js';
import { RESOURCE_KINDS } from './resource-kinds.js';
import { href, useRoute } from './router.js';

const SECTIONS = [
  { path: 'agents', label: 'Agents' },
  { path: 'playground', label: 'Playground' },
  { path: 'runs', label: 'Runs' },
  { path: 'sessions', label: 'Sessions' },
  { path: 'attachments', label: 'Attachments' },
  { path: 'quotas', label: 'Quotas' },
  { path: 'audit', label: 'Audit' },
  { path: 'manage', label: 'Manage' },
  { path: 'api', label: 'API' },
];
/** Pages reached from another page's links, not from the navigation, by the section they belong to: a suite run from its suite's page. */
const LINKED_ONLY: Record<string, string> = { 'eval-runs': 'manage' };
/** The navigation's section a page is shown under (a route's first part is any text, `constructor` too). */
const sectionOf = (path: string) => (Object.hasOwn(LINKED_ONLY, path) ? LINKED_ONLY[path] : path);

export function App() {
  const [credential, setCredential] = useState<Credential | undefined>(storedCredential);
  const route = useRoute();
  // One client per credential: pages load again when it changes, not on every render.
  const [refused, setRefused] = useState(false);
  const signOut = () => {
    storeCredential(undefined);
    setCredential(undefined);
  };
  const client = useMemo(
    () =>
      credential &&
      clientFor(credential, () => {
        setRefused(true);
        signOut();
      }),
    [credential],
  );
  if (!credential || !client)
    return (
      <SignIn
        refused={refused}
        onSignedIn={(signedIn) => {
          storeCredential(signedIn);
          setRefused(false);
          setCredential(signedIn);
        }}
      />
    );
  const [section = 'agents', id, subId] = route;
  const kind = section === 'manage' && id ? RESOURCE_KINDS.find((each) => each.path === id) : undefined;
  return (
    <>
      <header class="top">
        <a class="brand" href={href('agents')}>
          Hangar
        </a>
        <nav aria-label="Sections">
          {SECTIONS.map((each) => (
            <a href={href(each.path)} aria-current={sectionOf(section) === each.path ? 'page' : undefined}>
              {each.label}
            </a>
          ))}
        </nav>
        <button class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {section === 'agents' && !id && <AgentsPage client={client} />}
        {section === 'agents' && id && <AgentPage client={client} name={id} />}
        {section === 'playground' && <PlaygroundPage client={client} agentName={id} />}
        {section === 'runs' && !id && <RunsPage client={client} />}
        {section === 'runs' && id && <RunPage key={id} client={client} runId={id} />}
        {section === 'sessions' && !id && <SessionsPage client={client} />}
        {section === 'sessions' && id && <SessionPage client={client} sessionId={id} />}
        {section === 'attachments' && <AttachmentsPage client={client} />}
        {section === 'quotas' && <QuotasPage client={client} />}
        {section === 'audit' && <AuditPage client={client} />}
        {section === 'manage' && !id && <ManagePage />}
        {kind && !subId && <ResourceListPage key={kind.path} client={client} kind={kind} />}
        {kind?.get && subId && <ResourcePage key={`${kind.path}/${subId}`} client={client} kind={kind} resourceKey={subId} />}
        {section === 'manage' && id && (!kind || (subId && !kind.get)) && <p class="problem">No page at #{route.join('/')}.</p>}
        {section === 'api' && <ExplorerPage client={client} credential={credential} operationId={id} />}
        {section === 'eval-runs' && id && <EvalRunPage key={id} client={client} suiteRunId={id} />}
        {(Object.hasOwn(LINKED_ONLY, section) ? !id : !SECTIONS.some((each) => each.path === section)) && (
          <p class="problem">No page at #{route.join('/')}.</p>
        )}
      </main>
    </>
  );
}
