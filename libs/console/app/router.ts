import { useEffect, useState } from 'preact/hooks';

/** Pages are addressed by the URL's hash (`#/runs/<id>`), so the gateway serves one page whatever the route. */
export function useRoute(): string[] {
  const read = () => decodeURIComponent(location.hash.replace(/^#\/?/, '')).split('/').filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;
export const navigate = (...parts: string[]) => void (location.hash = href(...parts));
