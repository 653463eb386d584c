/**
 * The name of a tenant's named record (a tool server, webhook, schedule, quota rule, knowledge
 * collection): 1–64 letters, digits, `_`, `.` or `-`, starting with a letter or digit, so it sits
 * in a URL path as it is.
 */
export const RECORD_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a name that is not a {@link RECORD_NAME} is told. */
export const RECORD_NAME_RULE = 'must be 1–64 letters, digits, _ . - starting with a letter or digit';
