// The pack's schemas as react-jsonschema-form reads them: a `oneOf` of
// constants without a `type` (an enum with a description per value) is
// given the constants' type, so that it shows as a select.

function constantsType(options) {
  if (!Array.isArray(options) || !options.length) return null;
  const types = new Set(
    options.map((o) => (o && 'const' in o ? (o.const === null ? 'null' : typeof o.const) : 'no-const')),
  );
  if (types.size !== 1) return null;
  const [type] = types;
  return { string: 'string', number: 'number', boolean: 'boolean' }[type] || null;
}

/** `schema` ready for a form (a copy; the original is left as it is). */
export function formSchema(schema) {
  if (Array.isArray(schema)) return schema.map(formSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) out[key] = formSchema(value);
  if (!out.type) {
    const type = constantsType(out.oneOf) || constantsType(out.anyOf);
    if (type) out.type = type;
  }
  return out;
}
