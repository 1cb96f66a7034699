// Validation issues (Ajv-shaped: instancePath is a JSON Pointer) as the
// error schema react-jsonschema-form shows on each field.

function segments(pointer) {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The field path an issue is about: a missing property is its own field. */
export function issuePath(issue) {
  const path = segments(issue.instancePath || '');
  const missing = issue.params?.missingProperty;
  if (issue.keyword === 'required' && missing) path.push(missing);
  return path;
}

/** `issues` as an rjsf `extraErrors` object. */
export function errorSchema(issues) {
  const root = {};
  for (const issue of issues || []) {
    let node = root;
    for (const key of issuePath(issue)) {
      node[key] = node[key] || {};
      node = node[key];
    }
    node.__errors = [...(node.__errors || []), issue.message];
  }
  return root;
}

/** The issues of an answer: a pack error's, or a wait link's refusal's. */
export function issuesOf(body) {
  if (!body || typeof body !== 'object') return [];
  return body.issues || body.error?.issues || [];
}
