// The order a form shows an object's fields in, as a uiSchema of `ui:order`s.
//
// An index is canonical JSON: the keys of every object are sorted, so a
// schema's `properties` reach the page in alphabetical order, whatever
// order the author declared them in. Its arrays keep their order, and
// `required` lists the required fields in the order they were declared
// (schemars, like the other indexers, writes them so). A form therefore
// shows the required fields first, in `required`'s order, then the
// others in the schema's (alphabetical) order. See docs/inspector.md.

const COMBINATORS = ['allOf', 'anyOf', 'oneOf'];

// The schema a local `$ref` (`#/$defs/Line`) points at, else null.
function resolve(ref, root) {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return null;
  let node = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !(key in node)) return null;
    node = node[key];
  }
  return node && typeof node === 'object' ? node : null;
}

/** The fields of an object schema in the order a form shows them. */
export function orderedFields(schema) {
  const properties = schema && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  const declared = Array.isArray(schema?.required) ? schema.required : [];
  const first = [...new Set(declared)].filter((name) => properties.includes(name));
  return [...first, ...properties.filter((name) => !first.includes(name))];
}

// Merges the uiSchema `b` into `a` (the options of a oneOf share a field).
function merge(a, b) {
  if (!a) return b;
  if (!b) return a;
  const out = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (key === 'ui:order') {
      const names = [...(a[key] || []), ...value].filter((n) => n !== '*');
      out[key] = [...new Set(names), '*'];
    } else out[key] = merge(a[key], value);
  }
  return out;
}

function uiOf(schema, root, seen) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return undefined;
    const target = resolve(schema.$ref, root);
    const { $ref, ...rest } = schema;
    const inner = target ? uiOf(target, root, new Set([...seen, $ref])) : undefined;
    return merge(inner, uiOf(rest, root, seen));
  }
  let ui;
  if (schema.properties && typeof schema.properties === 'object') {
    ui = { 'ui:order': [...orderedFields(schema), '*'] };
    for (const [name, field] of Object.entries(schema.properties)) {
      const inner = uiOf(field, root, seen);
      if (inner) ui[name] = inner;
    }
  }
  if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
    const inner = uiOf(schema.items, root, seen);
    if (inner) ui = { ...ui, items: inner };
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    const inner = uiOf(schema.additionalProperties, root, seen);
    if (inner) ui = { ...ui, additionalProperties: inner };
  }
  for (const key of COMBINATORS) {
    if (Array.isArray(schema[key])) for (const option of schema[key]) ui = merge(ui, uiOf(option, root, seen));
  }
  return ui;
}

/** The uiSchema that orders every object's fields of `schema`, nested ones too. */
export function fieldOrder(schema) {
  return uiOf(schema, schema, new Set()) || {};
}
