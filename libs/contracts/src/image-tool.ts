/** The built-in tool that draws images, offered while Images:Enabled (the registry lists it, the run executor runs it). */
export const IMAGE_TOOL_NAME = 'generate_image';
