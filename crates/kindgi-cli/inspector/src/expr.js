// A flow's `when` predicates (flow.schema.json `Expr`) and operands as
// short text a person reads: `nodeOutputs.quote.totalCents > 0`.

const COMPARISONS = { eq: '=', ne: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥' };

/** An operand: its path, or its literal as JSON. */
export function operandText(operand) {
  if (operand && typeof operand === 'object') {
    if (typeof operand.path === 'string') return operand.path;
    if ('literal' in operand) return JSON.stringify(operand.literal);
  }
  return JSON.stringify(operand);
}

// A part of an `and` / `or` in parentheses when it is itself one.
function grouped(expr) {
  const text = exprText(expr);
  return expr && (expr.op === 'and' || expr.op === 'or') ? `(${text})` : text;
}

/** A predicate as text; one this page doesn't know is shown as JSON. */
export function exprText(expr) {
  if (!expr || typeof expr !== 'object') return JSON.stringify(expr);
  const { op } = expr;
  if (op in COMPARISONS) return `${operandText(expr.left)} ${COMPARISONS[op]} ${operandText(expr.right)}`;
  switch (op) {
    case 'in':
      return `${operandText(expr.value)} in ${operandText(expr.set)}`;
    case 'notIn':
      return `${operandText(expr.value)} not in ${operandText(expr.set)}`;
    case 'exists':
      return `${operandText(expr.value)} exists`;
    case 'notExists':
      return `${operandText(expr.value)} is missing`;
    case 'truthy':
      return `${operandText(expr.value)} is truthy`;
    case 'falsy':
      return `${operandText(expr.value)} is falsy`;
    case 'and':
    case 'or':
      if (Array.isArray(expr.children)) return expr.children.map(grouped).join(` ${op} `);
      break;
    case 'not':
      return `not ${grouped(expr.child)}`;
    default:
  }
  return JSON.stringify(expr);
}

/** An edge's policy in a few words: `retry ×3 · timeout 5000 ms`. */
export function policyText(policy) {
  if (!policy || typeof policy !== 'object') return '';
  const parts = [];
  if (policy.retry?.maxAttempts) parts.push(`retry ×${policy.retry.maxAttempts}`);
  if (policy.timeoutMs != null) parts.push(`timeout ${policy.timeoutMs} ms`);
  if (policy.concurrencyKey) parts.push(`one at a time: ${policy.concurrencyKey}`);
  if (policy.priority != null) parts.push(`priority ${policy.priority}`);
  return parts.join(' · ');
}
