import { describe, expect, it } from 'vitest';
import { consoleContentSecurityPolicy } from '../src/routes/console.routes.js';

const frameAncestors = (origins: string[]) => /frame-ancestors ([^;]+)/.exec(consoleContentSecurityPolicy(origins))![1];

describe('the console page’s content security policy', () => {
  it('lets no page frame the console while Hangar:Api:AllowedOrigins is empty', () => {
    expect(frameAncestors([])).toBe("'none'");
    expect(consoleContentSecurityPolicy([])).toContain("connect-src 'self'");
  });

  it('lets the allowed origins frame it, any page for *', () => {
    expect(frameAncestors(['https://portal.example.com', 'http://localhost:3000'])).toBe(
      'https://portal.example.com http://localhost:3000',
    );
    expect(frameAncestors(['https://portal.example.com', '*'])).toBe('*');
  });

  it('leaves out an entry that is not a plain origin, so no entry can add a directive', () => {
    expect(frameAncestors(["https://ok.example.com; script-src 'unsafe-inline'", 'javascript:alert(1)', 'https://fine.example.com'])).toBe(
      'https://fine.example.com',
    );
    expect(consoleContentSecurityPolicy(["https://x.example.com; script-src 'unsafe-inline'"])).not.toContain('unsafe-inline');
  });
});
