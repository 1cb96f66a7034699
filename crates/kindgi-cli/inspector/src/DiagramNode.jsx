import { SIZE } from './flowLayout.js';
import { entryOf } from './packIndex.js';

const KIND_NAMES = { tool: 'tool', agent: 'agent', flow: 'flow' };

// Props that make an SVG group a link the keyboard reaches too.
function linkProps(target, onOpen) {
  const open = () => onOpen({ kind: target.kind, id: target.id });
  return {
    role: 'link',
    tabIndex: 0,
    'aria-label': `Open the ${KIND_NAMES[target.kind]} ${target.id}`,
    onClick: (event) => {
      event.stopPropagation();
      open();
    },
    onKeyDown: (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        open();
      }
    },
  };
}

// A fanout's branch: `branchId → handler`, a link when the pack has the tool.
function Branch({ branch, width, index, onOpen }) {
  const found = branch.target && entryOf(index, branch.target.kind, branch.target.id);
  return (
    <g data-branch={branch.id} className={found ? 'opens' : undefined} {...(found ? linkProps(branch.target, onOpen) : {})}>
      <rect className="branch" x={SIZE.padX - 4} y={branch.y} width={width - 2 * SIZE.padX + 8} height={SIZE.row - 2} rx="3" />
      <text className={found ? 'detail target' : 'detail'} x={SIZE.padX + 2} y={branch.y + SIZE.row - 7}>
        {branch.text}
      </text>
      {!found && <title>{`No tool ${branch.target?.id} in this pack`}</title>}
    </g>
  );
}

/**
 * One box of the diagram: `$start`, `$end`, or a node saying what it runs.
 * A tool, agent or sub-flow node opens what it runs; `children` is a loop's
 * body, drawn inside its box.
 */
export default function DiagramNode({ box, index, onOpen, children }) {
  const found = box.target && entryOf(index, box.target.kind, box.target.id);
  const unresolved = box.target && !found;
  const classes = ['node', box.kind, unresolved && 'unresolved', found && 'opens'].filter(Boolean).join(' ');
  const notes = [
    unresolved && `No ${KIND_NAMES[box.target.kind]} ${box.target.id} in this pack`,
    ...box.notes,
  ].filter(Boolean);
  const sentinel = box.kind === 'start' || box.kind === 'end';
  return (
    <g
      className={classes}
      data-node={box.id}
      data-kind={box.kind}
      transform={`translate(${box.x},${box.y})`}
      {...(found ? linkProps(box.target, onOpen) : {})}
    >
      {notes.length > 0 && <title>{notes.join('\n')}</title>}
      <rect width={box.width} height={box.height} rx={sentinel ? box.height / 2 : 6} />
      <text
        className="title"
        x={sentinel ? box.width / 2 : SIZE.padX}
        y={SIZE.padY + 13}
        textAnchor={sentinel ? 'middle' : 'start'}
      >
        {box.title}
      </text>
      {box.detail.map((line, i) => (
        <text
          key={i}
          className={found && i === 0 ? 'detail target' : 'detail'}
          x={SIZE.padX}
          y={SIZE.padY + SIZE.title + i * SIZE.line + 12}
        >
          {line}
        </text>
      ))}
      {box.branches?.map((b) => (
        <Branch key={b.id} branch={b} width={box.width} index={index} onOpen={onOpen} />
      ))}
      {children}
    </g>
  );
}
