// The form's buttons as words: the form library's own draw icons from a
// font the page doesn't load, so its add, remove and move buttons showed
// as empty boxes. Each says what it does, and names its item for a
// screen reader.

// A button of the form that says what it does.
function TextButton({ label, className = '', title, uiSchema, registry, iconType, icon, ...rest }) {
  return (
    <button type="button" className={`form-button ${className}`} title={title || label} {...rest}>
      {label}
    </button>
  );
}

/** Adds an item to an array, or an entry to an object of free keys. */
function AddButton({ className = '', onClick, disabled }) {
  const entry = className.includes('object-property-expand');
  return (
    <p className="add-row">
      <TextButton
        label={entry ? 'Add entry' : 'Add item'}
        className={`add ${className}`}
        onClick={onClick}
        disabled={disabled}
      />
    </p>
  );
}

const MoveUpButton = (props) => <TextButton label="Move up" className="array-item-move-up" {...props} />;
const MoveDownButton = (props) => <TextButton label="Move down" className="array-item-move-down" {...props} />;
const CopyButton = (props) => <TextButton label="Copy" className="array-item-copy" {...props} />;
const RemoveButton = (props) => <TextButton label="Remove" className="array-item-remove remove" {...props} />;

/** One item of an array: its fields, then its buttons, each naming the item. */
function ArrayFieldItemTemplate(props) {
  const { children, className, disabled, readonly, hasToolbar, hasMoveUp, hasMoveDown, hasRemove, hasCopy } = props;
  const { index, onReorderClick, onCopyIndexClick, onDropIndexClick, registry, uiSchema } = props;
  const buttons = registry.templates.ButtonTemplates;
  const off = disabled || readonly;
  const n = index + 1;
  const common = { uiSchema, registry };
  return (
    <div className={`${className || ''} array-item-card`} data-item={index}>
      <div className="array-item-fields">{children}</div>
      {hasToolbar && (
        <div className="array-item-toolbox" role="group" aria-label={`Item ${n}`}>
          {(hasMoveUp || hasMoveDown) && (
            <buttons.MoveUpButton {...common} disabled={off || !hasMoveUp} onClick={onReorderClick(index, index - 1)} aria-label={`Move item ${n} up`} />
          )}
          {(hasMoveUp || hasMoveDown) && (
            <buttons.MoveDownButton {...common} disabled={off || !hasMoveDown} onClick={onReorderClick(index, index + 1)} aria-label={`Move item ${n} down`} />
          )}
          {hasCopy && <buttons.CopyButton {...common} disabled={off} onClick={onCopyIndexClick(index)} aria-label={`Copy item ${n}`} />}
          {hasRemove && <buttons.RemoveButton {...common} disabled={off} onClick={onDropIndexClick(index)} aria-label={`Remove item ${n}`} />}
        </div>
      )}
    </div>
  );
}

/** The templates every form of the page uses. */
export const templates = {
  ButtonTemplates: { AddButton, MoveUpButton, MoveDownButton, CopyButton, RemoveButton },
  ArrayFieldItemTemplate,
};
