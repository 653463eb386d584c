import { describe, expect, it } from 'vitest';
import { groupName, methodName, nameOperations } from '../src/codegen/operation-names.js';

describe('client operation names', () => {
  it('groups by tag', () => {
    expect(['Agents', 'Skill script grants', 'API keys', 'Content protection'].map(groupName)).toEqual([
      'agents',
      'skillScriptGrants',
      'apiKeys',
      'contentProtection',
    ]);
  });

  it('names a method by its operationId without the words naming its tag', () => {
    const names = [
      ['runAgent', 'Agents'],
      ['listAgentVersions', 'Agents'],
      ['listAgents', 'Agents'],
      ['estimateRun', 'Agents'],
      ['listRetentionPolicies', 'Retention'],
      ['createSkillScriptGrant', 'Skill script grants'],
      ['revokeApiKey', 'API keys'],
      ['resealContent', 'Content protection'],
      ['listModels', 'Catalog'],
      ['liveness', 'Meta'],
    ].map(([operationId, tag]) => methodName(operationId, tag));
    expect(names).toEqual([
      'run',
      'listVersions',
      'list',
      'estimateRun',
      'listPolicies',
      'create',
      'revoke',
      'reseal',
      'listModels',
      'liveness',
    ]);
  });

  it('keeps whole operationIds where short names would collide, whatever their order', () => {
    const operations = [
      { operationId: 'getAgent', tag: 'Agents' },
      { operationId: 'getAgents', tag: 'Agents' },
      { operationId: 'getRun', tag: 'Runs' },
    ];
    const named = (list: typeof operations) => nameOperations(list).map(({ group, name }) => `${group}.${name}`);
    expect(named(operations)).toEqual(['agents.getAgent', 'agents.getAgents', 'runs.get']);
    expect(named([...operations].reverse())).toEqual(['runs.get', 'agents.getAgents', 'agents.getAgent']);
  });
});
