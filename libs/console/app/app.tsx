import { useState } from 'preact/hooks';
import { clientFor, storeCredential, storedCredential, type Credential } from './api.js';
import { AgentPage } from './pages/agent.js';
import { AgentsPage } from './pages/agents.js';
import { PlaygroundPage } from './pages/playground.js';
import { RunPage } from './pages/run.js';
import { RunsPage } from './pages/runs.js';
import { SignIn } from './pages/sign-in.js';
import { href, useRoute } from './router.js';

const SECTIONS = [
  { path: 'agents', label: 'Agents' },
  { path: 'playground', label: 'Playground' },
  { path: 'runs', label: 'Runs' },
];

export function App() {
  const [credential, setCredential] = useState<Credential | undefined>(storedCredential);
  const route = useRoute();
  const signOut = () => {
    storeCredential(undefined);
    setCredential(undefined);
  };
  if (!credential)
    return (
      <SignIn
        onSignedIn={(signedIn) => {
          storeCredential(signedIn);
          setCredential(signedIn);
        }}
      />
    );
  const client = clientFor(credential);
  const [section = 'agents', id] = route;
  return (
    <>
      <header class="top">
        <a class="brand" href={href('agents')}>
          Hangar
        </a>
        <nav aria-label="Sections">
          {SECTIONS.map((each) => (
            <a href={href(each.path)} aria-current={section === each.path ? 'page' : undefined}>
              {each.label}
            </a>
          ))}
        </nav>
        <button class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {section === 'agents' && !id && <AgentsPage client={client} onUnauthorized={signOut} />}
        {section === 'agents' && id && <AgentPage client={client} name={id} />}
        {section === 'playground' && <PlaygroundPage client={client} agentName={id} />}
        {section === 'runs' && !id && <RunsPage client={client} />}
        {section === 'runs' && id && <RunPage client={client} runId={id} />}
        {!SECTIONS.some((each) => each.path === section) && <p class="problem">No page at #{route.join('/')}.</p>}
      </main>
    </>
  );
}
