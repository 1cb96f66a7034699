// The inspector's page: one script, one stylesheet and the PDF worker,
// under fixed names (no content hashes), so that rebuilding unchanged
// sources gives the same files byte for byte.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/inspector/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 4096,
    assetsInlineLimit: 0,
    modulePreload: false,
    rollupOptions: {
      output: {
        inlineDynamicImports: true,
        entryFileNames: 'assets/inspector.js',
        assetFileNames: (asset) =>
          asset.names?.some((n) => n.endsWith('.css')) ? 'assets/inspector.css' : 'assets/[name][extname]',
      },
    },
  },
});
