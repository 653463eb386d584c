import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console as static files in libs/console/web. Asset URLs are relative: the gateway serves the
// page under whatever Hangar:Api:Prefix is and points them at {prefix}/console/assets/.
export default defineConfig({
  root: fileURLToPath(new URL('./app', import.meta.url)),
  base: './',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('./web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
