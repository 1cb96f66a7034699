// The inspector in a real browser against the real `kindgi dev` serving
// examples/support-desk. Each step saves a screenshot to docs/inspector/.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { root, shots, startBrowser, startDev, startInspect } from './session.mjs';

let dev;
let browser;
let page;

const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

async function openTool(id) {
  await page.click(`nav [data-group=tool] button[data-id="${id}"]`);
  await page.waitForSelector(`[data-tool="${id}"]`);
}

// What the page's Content Security Policy blocked, as Chromium reports it,
// over every test (reloads included).
const blocked = [];

before(async () => {
  dev = await startDev();
  browser = await startBrowser();
  page = await browser.context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy/.test(message.text())) blocked.push(message.text());
  });
  await page.goto(dev.page);
});

after(async () => {
  await browser?.stop();
  await dev?.stop();
});

test('the pack: its tools, checks, agents and flows, and each tool’s facts', async () => {
  await page.waitForSelector('nav [data-group=tool] button[data-id="support.log-ticket"]');
  const listed = async (group) => page.locator(`nav [data-group=${group}] button`).allTextContents();
  assert.deepEqual((await listed('tool')).sort(), [
    'support.approve-refund',
    'support.canned-reply',
    'support.log-ticket',
    'support.post-reply',
    'support.refund-quote',
    'support.ticket-status',
    'support.weekly-report',
  ]);
  assert.deepEqual(await listed('check'), ['support.no-card-numbers']);
  assert.deepEqual(await listed('agent'), ['support.triage']);
  assert.deepEqual(await listed('flow'), ['support.intake', 'support.refund']);
  assert.match(await page.locator('header .generation').textContent(), /^generation 1$/);
  await openTool('support.approve-refund');
  const flags = await page.locator('[data-tool="support.approve-refund"] .flag').allTextContents();
  assert.ok(flags.includes('pauses'), flags.join());
  await openTool('support.log-ticket');
  assert.deepEqual(await page.locator('[data-tool="support.log-ticket"] .effect').allTextContents(), [
    'effect: writes support-desk tickets',
  ]);
  await page.click('summary:has-text("Input schema")');
  assert.match(await page.locator('[data-tool] details[open] pre').first().textContent(), /customerEmail/);
  await shot('pack');
  // A declarative HTTP tool says what request it is.
  await openTool('support.ticket-status');
  const http = page.locator('[data-tool="support.ticket-status"] [data-section=http]');
  assert.deepEqual(await http.locator('p').allTextContents(), [
    'An HTTP request, no code: GET https://helpdesk.example.com/api/tickets/{ticketId}/status',
    'bearer HELPDESK_TOKEN · timeout 10 s',
  ]);
  assert.equal(await page.locator('[data-tool="support.log-ticket"] [data-section=http]').count(), 0);
  await shot('http-tool');
});

async function openFlow(id) {
  await page.click(`nav [data-group=flow] button[data-id="${id}"]`);
  await page.waitForSelector(`[data-flow="${id}"] .diagram svg`);
}

test('a flow as a diagram: its nodes, $start, $end and edges with their when', async () => {
  await openFlow('support.intake');
  const diagram = page.locator('[data-flow="support.intake"] .diagram svg > .graph');
  // The flow's own boxes (a loop's body is drawn inside the loop's box).
  const boxes = await diagram.locator(':scope > [data-node]').evaluateAll((gs) =>
    gs.map((g) => [g.dataset.node, g.dataset.kind]),
  );
  assert.deepEqual(boxes, [
    ['$start', 'start'],
    ['log-each', 'loop'],
    ['triage', 'agent'],
    ['quote', 'tool'],
    ['refund', 'subgraph'],
    ['answer', 'tool'],
    ['wrap-up', 'fanout'],
    ['$end', 'end'],
  ]);
  // What a box says, line by line (its tooltip apart).
  const lines = (node) => diagram.locator(`[data-node=${node}] > text`).allTextContents();
  assert.deepEqual(await lines('triage'), ['triage', 'agent · support.triage']);
  assert.deepEqual(await lines('refund'), ['refund', 'sub-flow · support.refund 1.0.0', 'settle-all']);
  assert.deepEqual(await lines('log-each'), ['log-each', 'loop · foreach over runInput.messages', 'at most 100 · 4 at a time']);
  assert.match(await diagram.locator('[data-node=refund] > title').textContent(), /^input: ticketId ← nodeOutputs\.quote\.ticketId$/m);
  const body = diagram.locator('[data-node=log-each] .body [data-node]');
  assert.deepEqual(await body.evaluateAll((gs) => gs.map((g) => g.dataset.node)), ['$loop-start', 'log', '$loop-end']);
  assert.deepEqual(
    await diagram.locator('[data-node=wrap-up] [data-branch]').allTextContents(),
    ['report → support.weekly-report', 'note → support.post-reply'],
  );
  // Every edge, its ends, and the `when` of those that have one.
  const edges = await diagram.locator(':scope > [data-edge]').evaluateAll((gs) =>
    gs.map((g) => [g.dataset.from, g.dataset.to, g.querySelector('[data-when]')?.dataset.when ?? null]),
  );
  assert.deepEqual(edges, [
    ['$start', 'log-each', null],
    ['log-each', 'triage', null],
    ['triage', 'quote', 'nodeOutputs.triage.intent = "refund"'],
    ['triage', 'answer', 'nodeOutputs.triage.intent ≠ "refund"'],
    ['quote', 'refund', 'nodeOutputs.quote.totalCents > 0'],
    ['refund', 'wrap-up', null],
    ['answer', 'wrap-up', null],
    ['wrap-up', '$end', null],
  ]);
  assert.equal(
    await diagram.locator('[data-edge="quote->refund"] .edge-label').textContent(),
    'nodeOutputs.quote.totalCents > 0retry ×3',
  );
  // Each arrow runs from its node's box to the next one's.
  const ends = await diagram.evaluate((g) => {
    const box = (id) => g.querySelector(`:scope > [data-node="${CSS.escape(id)}"] > rect`).getBoundingClientRect();
    return [...g.querySelectorAll(':scope > [data-edge]')].map((e) => {
      const path = e.querySelector('path');
      const length = path.getTotalLength();
      const m = path.getScreenCTM();
      const at = (l) => new DOMPoint(path.getPointAtLength(l).x, path.getPointAtLength(l).y).matrixTransform(m);
      const near = (p, r) => p.x >= r.left - 2 && p.x <= r.right + 2 && p.y >= r.top - 2 && p.y <= r.bottom + 2;
      return near(at(0), box(e.dataset.from)) && near(at(length), box(e.dataset.to));
    });
  });
  assert.deepEqual(ends, Array(8).fill(true));
  await shot('flow');
  // The raw JSON, one click away, is the index's entry.
  await page.click('[data-flow] .view-switch button:has-text("raw JSON")');
  const raw = JSON.parse(await page.locator('[data-flow] pre.json').textContent());
  assert.equal(raw.id, 'support.intake');
  assert.equal(raw.nodes.length, 6);
  await page.click('[data-flow] .view-switch button:has-text("diagram")');
  await page.waitForSelector('[data-flow="support.intake"] .diagram svg');
});

test('a node of the diagram opens the tool, agent or flow it runs', async () => {
  const opens = async (node, selector) => {
    await openFlow('support.intake');
    await page.click(`[data-flow="support.intake"] .diagram ${node}`);
    await page.waitForSelector(selector);
  };
  await opens('[data-node=quote]', '[data-tool="support.refund-quote"]');
  await opens('[data-node=log]', '[data-tool="support.log-ticket"]');
  await opens('[data-branch=report]', '[data-tool="support.weekly-report"]');
  await opens('[data-node=triage]', '[data-agent="support.triage"]');
  await opens('[data-node=refund]', '[data-flow="support.refund"]');
  // The sub-flow's own diagram, and the flow it is a node of.
  const nodes = page.locator('[data-flow="support.refund"] .diagram svg > .graph > [data-node]');
  assert.deepEqual(await nodes.evaluateAll((gs) => gs.map((g) => g.dataset.node)), ['$start', 'approve', 'reply', '$end']);
  assert.equal(await page.locator('[data-flow="support.refund"] .used-by').textContent(), 'A sub-flow of support.intake');
  // A node is reached and opened from the keyboard too.
  await openFlow('support.intake');
  await page.focus('[data-flow="support.intake"] .diagram [data-node=answer]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-tool="support.canned-reply"]');
});

test('an agent: its tools, guardrails and settings as links and text', async () => {
  await page.click('nav [data-group=agent] button[data-id="support.triage"]');
  const agent = page.locator('[data-agent="support.triage"]');
  await agent.waitFor();
  assert.match(await agent.locator('[data-section=instructions]').textContent(), /You triage support requests\./);
  assert.deepEqual(await agent.locator('[data-section=tools] li').allTextContents(), [
    'support.log-ticket 1.0.0',
    'support.canned-reply 1.0.0',
    'support.post-reply 1.0.0',
    'support.approve-refund 1.0.0',
    'support.weekly-report 1.0.0',
    'support.refund-quote 1.0.0',
    'support.ticket-status 1.0.0',
  ]);
  assert.equal(await agent.locator('[data-section=tools] button[data-ref-kind=tool]').count(), 7);
  assert.deepEqual(await agent.locator('[data-section=guardrails] button.ref').allTextContents(), ['support.no-card-numbers']);
  assert.equal(await agent.locator('[data-setting=budget]').textContent(), 'BudgetmaxCostUsd0.25maxLatencyMs60000');
  assert.equal(await agent.locator('[data-setting=toolErrors]').textContent(), 'Tool errorsmaxRetries2');
  assert.deepEqual(await agent.locator('.badge.tag').allTextContents(), ['support', 'triage']);
  await shot('agent');
  await agent.locator('[data-section=tools] button[data-ref="support.post-reply"]').click();
  await page.waitForSelector('[data-tool="support.post-reply"]');
  await page.click('nav [data-group=agent] button[data-id="support.triage"]');
  await page.click('[data-agent] [data-section=guardrails] button[data-ref="support.no-card-numbers"]');
  await page.waitForSelector('[data-check="support.no-card-numbers"]');
  await page.click('nav [data-group=agent] button[data-id="support.triage"]');
  await page.click('[data-agent] [data-section=flows] button[data-ref="support.intake"]');
  await page.waitForSelector('[data-flow="support.intake"] .diagram svg');
  await page.click('nav [data-group=agent] button[data-id="support.triage"]');
  await page.click('[data-agent] .view-switch button:has-text("raw JSON")');
  assert.equal(JSON.parse(await page.locator('[data-agent] pre.json').textContent()).id, 'support.triage');
});

test('without the token the page says what it needs, and the API answers 401', async () => {
  const other = await browser.context.newPage();
  try {
    await other.goto(`${dev.base}/inspector/`);
    await other.waitForSelector('.refused');
    assert.equal(
      await other.locator('.refused').textContent(),
      'The inspector needs the dev token: open the /inspector/#token=… URL that kindgi printed',
    );
    const status = await other.evaluate(async () => {
      const wrong = await fetch('/inspector/api/pack', { headers: { Authorization: 'Bearer wrong' } });
      return wrong.status;
    });
    assert.equal(status, 401);
  } finally {
    await other.close();
  }
});

test('a call from the form: its result, duration, key and exact request', async () => {
  await openTool('support.log-ticket');
  await page.fill('#root_customerEmail', 'ana@example.com');
  await page.fill('#root_subject', 'Refund for order 12');
  await page.fill('#root_body', 'Please refund order 12.');
  await page.selectOption('#root_priority', 'high');
  const key = await page.locator('[data-key]').textContent();
  assert.match(key, /^[0-9a-f-]{36}$/);
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=result]');
  const output = JSON.parse(await page.locator('.json.output').textContent());
  assert.equal(output.created, true);
  assert.match(output.ticketId, /^T-\d{6}$/);
  assert.match(await page.locator('[data-duration]').textContent(), /^\d+$/);
  const request = JSON.parse(await page.locator('.json.request').textContent());
  assert.equal(request.body.ctx.idempotencyKey, key);
  assert.equal(request.headers['kindgi-pack-token'], '$KINDGI_SERVICE_TOKEN');
  await page.click('button:has-text("copy as kindgi call")');
  const line = await page.locator('pre.copied').textContent();
  assert.ok(line.startsWith(`kindgi call support.log-ticket --service ${dev.base} --token "$KINDGI_SERVICE_TOKEN" --index `), line);
  assert.ok(line.endsWith(`--input '{"body":"Please refund order 12.","customerEmail":"ana@example.com","priority":"high","subject":"Refund for order 12"}'`), line);
  await page.click('button:has-text("copy as curl")');
  assert.ok((await page.locator('pre.copied').textContent()).startsWith(`curl -s ${dev.base}/v1/invoke`));
  assert.ok(!(await page.content()).includes(dev.token), "the page shows no token");
  await shot('call');
});

test('a bad input: the issue shows on the field it names', async () => {
  await openTool('support.log-ticket');
  await page.fill('#root_customerEmail', 'not-an-email');
  await page.fill('#root_subject', 'x');
  await page.fill('#root_body', 'y');
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=error]');
  assert.match(await page.locator('[data-outcome=error] code').textContent(), /^input-validation-failed$/);
  const errorsOf = (id) => page.locator(`.field:has(> input#${id}) .error-detail li`).allTextContents();
  assert.deepEqual(await errorsOf('root_customerEmail'), ['must match format "email"']);
  assert.deepEqual(await errorsOf('root_subject'), []);
  assert.deepEqual(await errorsOf('root_body'), []);
  await shot('bad-input');
});

// The ids of the form's fields directly under `parent` (`root`, `root_lines_0`).
const fieldIds = (parent) =>
  page
    .locator(`.call-form [id^="${parent}_"]:is(input, select, textarea, fieldset)`)
    .evaluateAll(
      (els, p) => els.map((e) => e.id).filter((id) => !id.slice(p.length + 1).includes('_')),
      parent,
    );

test('fields in the order the author declared: required ones first, as declared', async () => {
  // Declared customerEmail, subject, body, priority; the index sorts keys.
  await openTool('support.log-ticket');
  assert.deepEqual(await fieldIds('root'), ['root_customerEmail', 'root_subject', 'root_body', 'root_priority']);
  await openTool('support.refund-quote');
  assert.deepEqual(await fieldIds('root'), ['root_ticketId', 'root_lines', 'root_shippingCents']);
  assert.deepEqual(await fieldIds('root_lines_0'), ['root_lines_0_sku', 'root_lines_0_quantity', 'root_lines_0_unitCents']);
});

test('array fields: buttons that say what they do add, move and remove items', async () => {
  await openTool('support.refund-quote');
  const items = page.locator('.call-form .array-item');
  await items.first().waitFor();
  assert.equal(await items.count(), 1, 'minItems 1: one line to start with');
  const add = page.locator('.call-form .array-item-add');
  assert.equal(await add.textContent(), 'Add item');
  await add.click();
  await add.click();
  await items.nth(2).waitFor();
  // Every button shows its words, and names its item for a screen reader.
  const toolbox = (i) =>
    items.nth(i).locator('.array-item-toolbox button').evaluateAll((buttons) =>
      buttons.map((b) => [b.textContent, b.getAttribute('aria-label'), b.disabled, b.getBoundingClientRect().width > 30]),
    );
  assert.deepEqual(await toolbox(0), [
    ['Move up', 'Move item 1 up', true, true],
    ['Move down', 'Move item 1 down', false, true],
    ['Remove', 'Remove item 1', false, true],
  ]);
  assert.deepEqual(await toolbox(2), [
    ['Move up', 'Move item 3 up', false, true],
    ['Move down', 'Move item 3 down', true, true],
    ['Remove', 'Remove item 3', false, true],
  ]);
  const line = async (i, sku, quantity, unit) => {
    await page.fill(`#root_lines_${i}_sku`, sku);
    await page.fill(`#root_lines_${i}_quantity`, String(quantity));
    await page.fill(`#root_lines_${i}_unitCents`, String(unit));
  };
  await page.fill('#root_ticketId', 'T-000007');
  await line(0, 'MUG-1', 2, 1250);
  await line(1, 'CAP-3', 1, 900);
  await line(2, 'PEN-9', 5, 100);
  await shot('array-fields');
  const skus = () => items.evaluateAll((cards) => cards.map((c) => c.querySelector('input[id$=_sku]').value));
  await page.getByRole('button', { name: 'Move item 3 up' }).click();
  await page.waitForFunction(() => document.querySelector('#root_lines_1_sku')?.value === 'PEN-9');
  assert.deepEqual(await skus(), ['MUG-1', 'PEN-9', 'CAP-3']);
  await page.getByRole('button', { name: 'Move item 1 down' }).click();
  await page.waitForFunction(() => document.querySelector('#root_lines_0_sku')?.value === 'PEN-9');
  assert.deepEqual(await skus(), ['PEN-9', 'MUG-1', 'CAP-3']);
  await page.getByRole('button', { name: 'Remove item 2' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.call-form .array-item').length === 2);
  assert.deepEqual(await skus(), ['PEN-9', 'CAP-3']);
  await page.fill('#root_shippingCents', '495');
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=result]');
  const output = JSON.parse(await page.locator('.json.output').textContent());
  assert.deepEqual(output, { ticketId: 'T-000007', totalCents: 500 + 900 + 495, skus: ['PEN-9', 'CAP-3'] });
});

test('a pause: its name and timeout, answered from the page', async () => {
  await openTool('support.approve-refund');
  await page.fill('#root_ticketId', 'T-000001');
  await page.fill('#root_amountCents', '12000');
  await page.fill('#root_reason', 'Damaged in transit');
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=pause]');
  assert.ok((await page.locator('[data-pause-name]').textContent()).length > 0);
  await shot('pause');
  await page.check('#answer_approved');
  await page.fill('#answer_approver', 'Lee');
  await page.click('.pause button[type=submit]');
  await page.waitForSelector('[data-wait=completed]');
  const output = JSON.parse(await page.locator('.json.output').textContent());
  assert.deepEqual(output, { approved: true, approver: 'Lee' });
  await shot('pause-answered');
});

test('a stored PDF: its facts and a rendered preview', async () => {
  await openTool('support.weekly-report');
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=result]');
  const file = page.locator('.file').first();
  await file.waitFor();
  assert.match(await file.textContent(), /support-report\.pdf/);
  assert.match(await file.textContent(), /application\/pdf/);
  assert.match(await file.textContent(), /1 page/);
  assert.match(await file.locator('code').first().textContent(), /^[0-9a-f]{64}$/);
  await page.waitForSelector('canvas.pdf[data-rendered=true]');
  assert.equal(await file.locator('a.download').getAttribute('download'), 'support-report.pdf');
  await shot('files');
});

test('a check: a failing trace, and its reason', async () => {
  await page.click('nav [data-group=check] button[data-id="support.no-card-numbers"]');
  await page.waitForSelector('[data-check="support.no-card-numbers"]');
  await page.click('.check button[type=submit]');
  await page.waitForSelector('[data-outcome=passed]');
  const trace = { runId: 'run_inspector', output: 'Your card 4111 1111 1111 1111 is refunded.' };
  await page.fill('textarea.trace', JSON.stringify(trace, null, 2));
  await page.click('.check button[type=submit]');
  await page.waitForSelector('[data-outcome=failed]');
  assert.equal(
    await page.locator('[data-outcome=failed]').textContent(),
    'Failed: the output shows what looks like a payment card number',
  );
  await shot('check');
});

test('a slow call shows how long it has run, and is cancelled from the page', async () => {
  // A helpdesk that takes every request and never answers it.
  const held = [];
  let helpdeskClosed;
  const closed = new Promise((resolve) => (helpdeskClosed = resolve));
  const helpdesk = createServer((socket) => {
    held.push(socket);
    socket.on('error', () => {});
    // Read (and drop) what comes, so that the caller's close is seen.
    socket.resume();
    socket.on('close', helpdeskClosed);
  });
  await new Promise((resolve) => helpdesk.listen(0, '127.0.0.1', resolve));
  try {
    await openTool('support.post-reply');
    await page.fill('textarea[name=env]', `HELPDESK_URL=http://127.0.0.1:${helpdesk.address().port}`);
    await page.fill(
      'textarea[name=connections]',
      JSON.stringify({
        helpdesk: {
          connectionId: 'conn_1',
          app: 'acme-helpdesk',
          appName: 'Acme Helpdesk',
          accessToken: 'tok-slow-7731',
          account: { id: 'agent-1', label: 'lee@acme.example' },
        },
      }),
    );
    await page.fill('#root_ticketId', 'T-000042');
    await page.fill('#root_message', 'We are on it.');
    await page.click('.call-form button[type=submit]');
    await page.waitForSelector('[data-running]');
    // The time so far counts up while the call runs.
    await page.waitForFunction(() => Number(document.querySelector('[data-elapsed]')?.textContent) >= 1);
    assert.equal(await page.locator('.call-form button[type=submit]').isDisabled(), true);
    await shot('running');
    await page.click('[data-running] button:has-text("Cancel")');
    await page.waitForSelector('[data-outcome=cancelled]');
    assert.equal(await page.locator('[data-running]').count(), 0);
    assert.equal(
      await page.locator('[data-outcome=cancelled]').textContent(),
      'Cancelled: the connection to the pack service was closed, and the service ends the call cancelled',
    );
    // The handler stopped: its request to the helpdesk was dropped.
    let waited;
    await Promise.race([
      closed,
      new Promise((_, reject) => {
        waited = setTimeout(
          () => reject(new Error(`the helpdesk's ${held.length} connection(s) stayed open`)),
          10000,
        );
      }),
    ]).finally(() => clearTimeout(waited));
    // The service logged the call as ended `cancelled`.
    const requestId = (await page.locator('.result p.muted code').first().textContent()).trim();
    assert.match(requestId, /^insp_[0-9a-f]+$/);
    await page.click('button:has-text("logs of this call")');
    await page.waitForSelector(`.logs li[data-request="${requestId}"]:has-text("support.post-reply cancelled")`);
    assert.equal(await page.locator('.history li [data-summary]').first().textContent(), 'cancelled');
    await shot('cancelled');
  } finally {
    for (const socket of held) socket.destroy();
    helpdesk.close();
  }
});

test('logs: the records of one call, by its request id', async () => {
  await openTool('support.log-ticket');
  await page.fill('#root_customerEmail', 'bo@example.com');
  await page.fill('#root_subject', 'Where is my order?');
  await page.fill('#root_body', 'It has been a week.');
  await page.click('.call-form button[type=submit]');
  await page.waitForSelector('[data-outcome=result]');
  const requestId = (await page.locator('.result code').first().textContent()).trim();
  await page.click('button:has-text("logs of this call")');
  await page.waitForSelector(`.logs li[data-request="${requestId}"]`);
  const others = await page.locator('.logs li').evaluateAll(
    (items, id) => items.filter((li) => !li.textContent.includes(id)).length,
    requestId,
  );
  assert.equal(others, 0);
  await shot('logs');
});

test('history: a past call opened and run again with the same key', async () => {
  const first = page.locator('.history button', { hasText: 'support.log-ticket' }).first();
  await first.click();
  await page.waitForSelector('[data-outcome=result]');
  const before = JSON.parse(await page.locator('.json.output').textContent());
  await page.click('button:has-text("run again (same key)")');
  await page.waitForFunction(
    (id) => {
      const out = document.querySelector('.json.output');
      return out && JSON.parse(out.textContent).created === false && JSON.parse(out.textContent).ticketId === id;
    },
    before.ticketId,
  );
  await page.click('button:has-text("run again (new key)")');
  await page.waitForFunction(() => {
    const out = document.querySelector('.json.output');
    return out && JSON.parse(out.textContent).created === true;
  });
  await shot('history');
});

test('the dev loop: a failed build shows in the page while the old generation serves', async () => {
  const folder = join(root, 'examples/support-desk/.kindgi');
  const secrets = join(folder, 'secrets.env');
  const hadFolder = existsSync(folder);
  const before = existsSync(secrets) ? readFileSync(secrets) : null;
  mkdirSync(folder, { recursive: true });
  try {
    writeFileSync(secrets, 'not a NAME=VALUE line\n');
    const failure = page.locator('.failure');
    await failure.waitFor({ timeout: 120000 });
    assert.match(await failure.textContent(), /secrets\.env line 1: expected NAME=VALUE/);
    assert.match(await failure.textContent(), /generation 1 keeps serving/);
    assert.equal(await page.locator('header .generation').textContent(), 'generation 1');
    await shot('dev-loop');
  } finally {
    if (before === null) rmSync(secrets, { force: true });
    else writeFileSync(secrets, before);
    if (!hadFolder) rmSync(folder, { recursive: true, force: true });
  }
  await page.locator('.failure').waitFor({ state: 'detached', timeout: 300000 });
  assert.match(await page.locator('header .generation').textContent(), /^generation \d+$/);
  assert.notEqual(await page.locator('header .generation').textContent(), 'generation 1');
});

test('the context panel starts with the dev files: .env values, and the connections dev adds by name', async () => {
  const pack = join(root, 'examples/support-desk');
  const dotenv = join(pack, '.env');
  const folder = join(pack, '.kindgi');
  const connections = join(folder, 'connections.env');
  const kept = (path) => (existsSync(path) ? readFileSync(path) : null);
  const hadFolder = existsSync(folder);
  const before = { dotenv: kept(dotenv), connections: kept(connections) };
  const generation = await page.locator('header .generation').textContent();
  mkdirSync(folder, { recursive: true });
  try {
    writeFileSync(dotenv, 'HELPDESK_URL=http://127.0.0.1:9/helpdesk\n');
    writeFileSync(connections, 'helpdesk=acme-helpdesk:tok-sentinel-4242\n');
    await page.waitForFunction(
      (was) => document.querySelector('header .generation')?.textContent !== was,
      generation,
      { timeout: 300000 },
    );
    await openTool('support.canned-reply');
    await openTool('support.post-reply');
    assert.equal(await page.inputValue('textarea[name=env]'), 'HELPDESK_URL=http://127.0.0.1:9/helpdesk');
    assert.equal(
      await page.getAttribute('textarea[name=connections]', 'placeholder'),
      'kindgi dev adds helpdesk from .kindgi/connections.env unless given here',
    );
    assert.ok(!(await page.content()).includes('tok-sentinel-4242'), 'the page shows no connection token');
    await shot('context');
  } finally {
    for (const [path, was] of [[dotenv, before.dotenv], [connections, before.connections]]) {
      if (was === null) rmSync(path, { force: true });
      else writeFileSync(path, was);
    }
    if (!hadFolder) rmSync(folder, { recursive: true, force: true });
  }
});

test('kindgi inspect: the same page on a running pack service', async () => {
  const inspect = await startInspect(dev.base, dev.token, dev.index);
  const other = await browser.context.newPage();
  try {
    await other.goto(inspect.page);
    await other.click('nav [data-group=tool] button[data-id="support.canned-reply"]');
    await other.waitForSelector('[data-tool="support.canned-reply"]');
    await other.click('.call-form button.link');
    await other.fill('textarea.raw', '{"customerName": "Ana", "topic": "billing"}');
    await other.click('.call-form button[type=submit]');
    await other.waitForSelector('[data-outcome]');
    assert.equal(await other.locator('[data-outcome]').getAttribute('data-outcome'), 'result', await other.locator('.result').textContent());
    assert.equal(await other.locator('header .generation').count(), 0);
    const output = JSON.parse(await other.locator('.json.output').textContent());
    assert.match(JSON.stringify(output), /Ana/);
    await other.screenshot({ path: join(shots, 'inspect.png'), fullPage: true });
  } finally {
    await other.close();
    await inspect.stop();
  }
});

test('logs follow the newest records until the user scrolls back', async () => {
  // Calls through the dev front, each a few records.
  const calls = async (n) => {
    for (let i = 0; i < n; i++) {
      const answer = await fetch(`${dev.base}/v1/invoke`, {
        method: 'POST',
        headers: { 'kindgi-pack-token': dev.token, 'content-type': 'application/json' },
        body: JSON.stringify({
          v: 2,
          kind: 'invoke',
          tool: { id: 'support.canned-reply' },
          input: { customerName: `Ana ${i}`, topic: 'billing' },
          ctx: { tenantId: 'acme', runId: `follow-${i}` },
        }),
      });
      assert.equal(answer.status, 200);
    }
  };
  await page.fill('input[name=logFilter]', '');
  const logs = 'section.logs';
  const gap = () =>
    page.evaluate((sel) => {
      const el = document.querySelector(sel);
      return el.scrollHeight - el.scrollTop - el.clientHeight;
    }, logs);
  const records = () => page.evaluate((sel) => Number(document.querySelector(sel).dataset.records), logs);
  const before = await records();
  await calls(30);
  await page.waitForFunction(
    ([sel, n]) => {
      const el = document.querySelector(sel);
      return el.scrollHeight > el.clientHeight + 200 && Number(el.dataset.records) >= n;
    },
    [logs, before + 30],
  );
  assert.ok((await gap()) <= 24, `the newest record is in view (${await gap()} px below)`);
  // Scrolled back: the place is kept while records come, and "newest"
  // takes the panel back to the end.
  await page.evaluate((sel) => {
    document.querySelector(sel).scrollTop = 0;
  }, logs);
  await page.waitForSelector(`${logs}[data-following=false] button.newest`);
  const scrolledAt = await records();
  await calls(10);
  await page.waitForFunction(
    ([sel, n]) => Number(document.querySelector(sel).dataset.records) >= n,
    [logs, scrolledAt + 10],
  );
  assert.equal(await page.evaluate((sel) => document.querySelector(sel).scrollTop, logs), 0);
  await page.click(`${logs} button.newest`);
  await page.waitForSelector(`${logs}[data-following=true]`);
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el.scrollHeight - el.scrollTop - el.clientHeight <= 24;
  }, logs);
});

test('the page runs under its security policy: nothing it did was blocked', async () => {
  // Every test before ran on this page: calls, forms, a PDF's preview.
  assert.deepEqual(blocked, []);
  assert.deepEqual(await page.evaluate(() => window.cspViolations), []);
  const answer = await page.request.get(`${dev.base}/inspector/`);
  const headers = answer.headers();
  assert.match(headers['content-security-policy'], /frame-ancestors 'none'/);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.equal(headers['x-content-type-options'], 'nosniff');
});
