//! A PDF's page count, read with `hayro-syntax` as a PDF reader reads it:
//! the last cross-reference section and those it updates (tables or
//! streams, linearized or incrementally updated files alike), objects in
//! object streams, and a table rebuilt by scanning when the file's own is
//! broken. Objects are read lazily, where they are, so a file costs about
//! what its page tree does.
//!
//! The page tree is then walked from the catalog, every node once: pages
//! are its leaves. A tree that can't be walked to its end (a kid that is
//! missing or isn't a dictionary, a node reached twice, deeper than
//! [`MAX_DEPTH`] or larger than [`MAX_NODES`]) has no page count, and
//! neither has a tree without pages.

use std::collections::HashSet;

use hayro_syntax::Pdf;
use hayro_syntax::object::{Array, Dict, MaybeRef, Name, Object, ObjectIdentifier};

use super::streams;

/// Levels of `Pages` nodes under the root: far more than any writer nests
/// (they balance their trees, a few levels for thousands of pages).
pub(crate) const MAX_DEPTH: usize = 256;

/// Page tree nodes and pages walked, at most.
pub(crate) const MAX_NODES: usize = 250_000;

/// The page count of `bytes`, a PDF: `None` when its page tree can't be
/// read.
pub(crate) fn page_count(bytes: &[u8]) -> Option<u32> {
    streams::check(bytes).ok()?;
    let pdf = Pdf::new(bytes.to_vec()).ok()?;
    let xref = pdf.xref();
    let catalog = xref.get::<Dict<'_>>(xref.root_id())?;
    let mut walk = Walk {
        seen: HashSet::new(),
        pages: 0,
        nodes: 0,
    };
    let root = match catalog.get_raw::<Dict<'_>>(b"Pages")? {
        MaybeRef::Ref(id) => walk.resolve(xref, id.into())?,
        MaybeRef::NotRef(dict) => dict,
    };
    // The root is a node even when it doesn't say so.
    let mut stack = vec![walk.kids(&root)?];
    while let Some(kids) = stack.last_mut() {
        let Some(kid) = kids.next() else {
            stack.pop();
            continue;
        };
        let dict = match kid {
            MaybeRef::Ref(id) => walk.resolve(xref, id.into())?,
            MaybeRef::NotRef(object) => object.into_dict()?,
        };
        walk.count_node()?;
        if is_node(&dict) {
            if stack.len() >= MAX_DEPTH {
                return None;
            }
            let kids = walk.kids(&dict)?;
            stack.push(kids);
        } else {
            walk.pages += 1;
        }
    }
    (walk.pages > 0).then_some(walk.pages)
}

/// A `Pages` node, as PDF readers tell one: a dictionary with `Kids`,
/// unless its type says it is a page.
fn is_node(dict: &Dict<'_>) -> bool {
    let kind = dict.get::<Name<'_>>(b"Type");
    match kind.as_deref() {
        Some(b"Page") => false,
        Some(b"Pages") => true,
        _ => dict.contains_key(b"Kids"),
    }
}

struct Walk {
    seen: HashSet<ObjectIdentifier>,
    pages: u32,
    nodes: usize,
}

impl Walk {
    /// The dictionary `id` names, once: a tree reaches each node by one path.
    fn resolve<'a>(
        &mut self,
        xref: &'a hayro_syntax::xref::XRef,
        id: ObjectIdentifier,
    ) -> Option<Dict<'a>> {
        if !self.seen.insert(id) {
            return None;
        }
        xref.get::<Dict<'a>>(id)
    }

    fn count_node(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    /// A node's kids: an array, written there or referred to.
    fn kids<'a>(&mut self, node: &Dict<'a>) -> Option<hayro_syntax::object::array::ArrayIter<'a>> {
        let kids = node.get::<Array<'a>>(b"Kids")?;
        // An array with a kid that isn't a dictionary or a reference is damaged.
        if kids
            .raw_iter()
            .any(|kid| !matches!(kid, MaybeRef::Ref(_) | MaybeRef::NotRef(Object::Dict(_))))
        {
            return None;
        }
        Some(kids.raw_iter())
    }
}
