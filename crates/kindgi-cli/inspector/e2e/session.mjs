// A real `kindgi dev` on examples/support-desk and a real headless
// Chromium (Debian's, driven by playwright-core) for the browser tests.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root. */
export const root = resolve(here, '../../../..');
/**
 * Where the screenshots go: `INSPECTOR_SHOTS` (for docs/inspector.md,
 * `INSPECTOR_SHOTS=docs/inspector`, relative to the repository's root),
 * else a folder of the system's temporary directory, so that a test run
 * leaves the tree as it was.
 */
export const shots = process.env.INSPECTOR_SHOTS
  ? resolve(root, process.env.INSPECTOR_SHOTS)
  : join(tmpdir(), 'kindgi-inspector-shots');

const FIRST_BUILD_MS = 15 * 60 * 1000;

/** Starts `kindgi dev`; resolves once its banner names the inspector. */
export async function startDev() {
  const bin = process.env.KINDGI_BIN || join(process.env.CARGO_TARGET_DIR || join(root, 'target'), 'debug/kindgi');
  const state = mkdtempSync(join(tmpdir(), 'kindgi-inspector-e2e-'));
  const token = randomBytes(16).toString('hex');
  const child = spawn(
    bin,
    ['dev', '--pack-dir', join(root, 'examples/support-desk'), '--port', '0', '--token', token, '--state-dir', state],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SUPPORT_DESK_DB: join(state, 'support.db') } },
  );
  let output = '';
  const page = await new Promise((resolvePage, reject) => {
    const timer = setTimeout(() => reject(new Error(`kindgi dev did not serve in time:\n${output}`)), FIRST_BUILD_MS);
    const read = (chunk) => {
      output += chunk;
      const serving = output.includes(' is serving at http://');
      const url = output.match(/inspect: (http:\/\/127\.0\.0\.1:\d+\/inspector\/#token=\w+)/);
      if (serving && url) {
        clearTimeout(timer);
        resolvePage(url[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`kindgi dev exited (${code}):\n${output}`)));
  });
  const base = page.replace(/\/inspector\/#.*/, '');
  return {
    page,
    base,
    token,
    index: join(state, 'index.json'),
    log: () => output,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.on('exit', r));
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 20000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** Starts `kindgi inspect` on a running service; resolves with its page's URL. */
export async function startInspect(service, token, index) {
  const bin = process.env.KINDGI_BIN || join(process.env.CARGO_TARGET_DIR || join(root, 'target'), 'debug/kindgi');
  const data = mkdtempSync(join(tmpdir(), 'kindgi-inspect-e2e-'));
  const child = spawn(bin, ['inspect', '--service', service, '--token', token, '--index', index, '--data-dir', data], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const page = await new Promise((resolvePage, reject) => {
    const timer = setTimeout(() => reject(new Error(`kindgi inspect printed no URL:\n${output}`)), 30000);
    const read = (chunk) => {
      output += chunk;
      const url = output.match(/(http:\/\/127\.0\.0\.1:\d+\/inspector\/#token=\w+)/);
      if (url) {
        clearTimeout(timer);
        resolvePage(url[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`kindgi inspect exited (${code}):\n${output}`)));
  });
  return {
    page,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.on('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A fresh headless Chromium with a page of 1280×900. */
export async function startBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'kindgi-inspector-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  // Every page records what its Content Security Policy blocked.
  await context.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  mkdirSync(shots, { recursive: true });
  return {
    context,
    async stop() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
