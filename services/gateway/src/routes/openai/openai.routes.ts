import { chatCompletionRoutes } from './chat-completions.routes.js';
import { conversationRoutes } from './conversations.routes.js';
import { modelRoutes } from './models.routes.js';
import { responseRoutes } from './responses.routes.js';

/** The OpenAI-compatible surface, mounted at `{prefix}/v1` (API.md "OpenAI-compatible surface"). */
export const openAIRoutes = [...modelRoutes, ...chatCompletionRoutes, ...responseRoutes, ...conversationRoutes];
