// The page's pure parts in Node: issues placed on fields, schemas made
// ready for forms and their fields ordered, and calls written as command
// lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorSchema, issuePath } from '../src/issues.js';
import { formSchema } from '../src/schema.js';
import { asCurl, asKindgiCall } from '../src/copy.js';
import { fieldOrder, orderedFields } from '../src/fieldOrder.js';

test('an issue goes on the field its path names', () => {
  const issues = [
    { instancePath: '/customerEmail', keyword: 'format', message: 'must match format "email"' },
    { instancePath: '/items/1/sku', keyword: 'minLength', message: 'too short' },
    { instancePath: '/address', keyword: 'required', params: { missingProperty: 'city' }, message: 'city is required' },
    { instancePath: '/a~1b/c~0d', keyword: 'type', message: 'must be string' },
    { instancePath: '', keyword: 'additionalProperties', message: 'must NOT have additional properties' },
  ];
  assert.deepEqual(issuePath(issues[2]), ['address', 'city']);
  assert.deepEqual(errorSchema(issues), {
    customerEmail: { __errors: ['must match format "email"'] },
    items: { 1: { sku: { __errors: ['too short'] } } },
    address: { city: { __errors: ['city is required'] } },
    'a/b': { 'c~d': { __errors: ['must be string'] } },
    __errors: ['must NOT have additional properties'],
  });
});

test('a oneOf of constants becomes a select; nested schemas are kept', () => {
  const schema = {
    type: 'object',
    properties: {
      priority: { default: 'normal', oneOf: [{ const: 'low' }, { const: 'normal' }] },
      mixed: { oneOf: [{ const: 'a' }, { type: 'object', properties: { x: { type: 'string' } } }] },
      lines: { type: 'array', items: { type: 'object', properties: { n: { oneOf: [{ const: 1 }, { const: 2 }] } } } },
    },
  };
  const ready = formSchema(schema);
  assert.equal(ready.properties.priority.type, 'string');
  assert.equal(ready.properties.mixed.type, undefined);
  assert.equal(ready.properties.lines.items.properties.n.type, 'number');
  assert.equal(schema.properties.priority.type, undefined, 'the original is left as it is');
});

test('a call as kindgi call and curl lines, with no token in them', () => {
  const outcome = {
    toolId: 'support.log-ticket',
    call: {
      input: { subject: "it's late" },
      ctx: { tenantId: 't', runId: 'r', projectId: 'p', env: { REGION: 'eu west' }, secrets: { API_KEY: 'typed' } },
      step: 'inspector',
      timeoutMs: 120000,
    },
    request: {
      url: 'http://127.0.0.1:8080/v1/invoke',
      headers: { 'content-type': 'application/json', 'kindgi-pack-token': '$KINDGI_SERVICE_TOKEN' },
      body: { v: 2, kind: 'invoke', ctx: { runId: 'r', toolFiles: { token: 'x' }, waitToken: { url: 'y' } } },
    },
  };
  const pack = { serviceUrl: 'http://127.0.0.1:8080', indexPath: '/p/index.json' };
  assert.equal(
    asKindgiCall(outcome, pack),
    `kindgi call support.log-ticket --service http://127.0.0.1:8080 --token "$KINDGI_SERVICE_TOKEN" --index /p/index.json --tenant t --run r --project p --step inspector --env 'REGION=eu west' --secret API_KEY="$API_KEY" --input '{"subject":"it'\\''s late"}'`,
  );
  assert.equal(
    asCurl(outcome),
    `curl -s http://127.0.0.1:8080/v1/invoke -H "kindgi-pack-token: $KINDGI_SERVICE_TOKEN" -H 'content-type: application/json' -d '{"v":2,"kind":"invoke","ctx":{"runId":"r"}}'`,
  );
});

test('fields in the order declared where the index keeps it: required first, in its order', () => {
  // As an index carries it: `properties` sorted, `required` in declared order.
  const schema = {
    type: 'object',
    properties: {
      lines: { type: 'array', items: { $ref: '#/$defs/Line' } },
      note: { type: 'string' },
      shippingCents: { type: 'integer', default: 0 },
      ticketId: { type: 'string' },
    },
    required: ['ticketId', 'lines', 'notAField'],
    $defs: {
      Line: {
        type: 'object',
        properties: { quantity: { type: 'integer' }, sku: { type: 'string' }, unitCents: { type: 'integer' } },
        required: ['sku', 'quantity', 'unitCents'],
      },
    },
  };
  assert.deepEqual(orderedFields(schema), ['ticketId', 'lines', 'note', 'shippingCents']);
  assert.deepEqual(fieldOrder(schema), {
    'ui:order': ['ticketId', 'lines', 'note', 'shippingCents', '*'],
    lines: { items: { 'ui:order': ['sku', 'quantity', 'unitCents', '*'] } },
  });
  const recursive = { type: 'object', properties: { child: { $ref: '#' } }, required: ['child'] };
  assert.deepEqual(fieldOrder(recursive), { 'ui:order': ['child', '*'] });
  assert.deepEqual(fieldOrder({ type: 'string' }), {});
});
