/** Two buttons that switch a view between its picture and its raw JSON. */
export default function ViewSwitch({ raw, onRaw, picture }) {
  return (
    <div className="view-switch" role="group" aria-label="Show as">
      <button type="button" aria-pressed={!raw} onClick={() => onRaw(false)}>
        {picture}
      </button>
      <button type="button" aria-pressed={raw} onClick={() => onRaw(true)}>
        raw JSON
      </button>
    </div>
  );
}
