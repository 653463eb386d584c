// `npm run build:console` (and npm install's postinstall): the web console's static files in
// libs/console/web. Skipped, saying so, where it cannot be built: an install without dev
// dependencies (no Vite), or one made before the sources were copied (the image's npm ci layer).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const config = fileURLToPath(new URL('../libs/console/vite.config.ts', import.meta.url));
const page = fileURLToPath(new URL('../libs/console/app/index.html', import.meta.url));
let vite;
try {
  vite = await import('vite');
} catch {
  console.log('console: not built (Vite is not installed: an install without dev dependencies)');
}
if (vite && !existsSync(page)) console.log('console: not built (its sources are not here yet)');
else if (vite) {
  const started = performance.now();
  await vite.build({ configFile: config });
  console.log(`console: built into libs/console/web in ${Math.round(performance.now() - started)} ms`);
}
