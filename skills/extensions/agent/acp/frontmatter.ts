// The frontmatter agent-acp and agent-kiro share: a hidden, internal provider skill whose params
// are the provider contract's args (src/agent/provider.ts) — only the name, the description and
// what `config.acp` defaults to differ.

export function providerFrontmatter(name: string, description: string, acpConfig: string) {
  return {
    name,
    description,
    metadata: {
      visibility: 'hidden',
      role: 'skill',
      tags: ['meta-internal'],
      params: {
        type: 'object',
        properties: {
          prompt: { type: 'string', description: 'System prompt: the first prompt\'s first content block.' },
          config: { type: 'object', description: `The cascade's model configuration: acp { ${acpConfig} }, maxTurns, record, deltas, provider (replay), cassette, baseDir …` },
          invokeRef: { type: 'string', description: 'Callback ref that executes the invoke tool\'s code: invoked with { code }.' },
          hookRef: { type: 'string', description: 'Callback ref for lifecycle events; its answer is a directive.' },
          userMessage: { type: 'string', description: 'The first user message: the first prompt\'s second content block.' },
          skillName: { type: 'string', description: 'The skill whose pipeline started this agent.' },
          agentSignal: { description: 'AbortSignal that cancels the session (in-process callers only).' },
        },
        required: ['prompt', 'invokeRef'],
      },
      returns: {},
    },
  };
}
