//! The data file's pages as LMDB lays them out, read with `pread` instead of through the
//! memory map, to check a file before the map is trusted with it.
//!
//! LMDB reads its B-trees straight from the map: a page past the end of a truncated file is
//! a SIGBUS, and a page overwritten with garbage sends it down pointers that are not there.
//! Reading the same structures with `pread` turns both into an error that says what is
//! damaged. [`check_on_open`] costs two page reads on a healthy file (the meta pages, and a
//! comparison of the file's length with the last page they say is in use); only a file
//! shorter than that is walked page by page, to tell a damaged file from one whose last
//! pages were freed before they were ever written. [`walk`] visits every page reachable
//! from the current meta page, for `cosmoscope check`.
//!
//! The layout (LMDB 0.9, 64-bit, no `MDB_VL32`): a 16-byte page header (page number,
//! padding, flags, then the lower and upper free-space bounds, or an overflow run's page
//! count), two meta pages at the start of the file, and nodes addressed by 16-bit offsets
//! after the header. The numbers below are LMDB's `mdb.c` constants by their names there.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const PAGE_HEADER: usize = 16;
const NODE_HEADER: usize = 8;
const DB_RECORD: usize = 48;

const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_META: u16 = 0x08;
const P_LEAF2: u16 = 0x20;

const F_BIGDATA: u16 = 0x01;
const F_SUBDATA: u16 = 0x02;
const F_DUPDATA: u16 = 0x04;

const MAGIC: u32 = 0xBEEF_C0DE;
/// `P_INVALID`: the root of an empty tree.
const NO_PAGE: u64 = u64::MAX;

/// One B-tree's record (`MDB_db`): where its root is and how deep it goes.
#[derive(Debug, Clone, Copy)]
struct Tree {
    depth: u16,
    root: u64,
}

impl Tree {
    fn read(b: &[u8]) -> Tree {
        Tree {
            depth: u16_at(b, 6),
            root: u64_at(b, 40),
        }
    }
}

/// The meta page a reader would use: the valid one with the newer transaction.
#[derive(Debug, Clone)]
pub struct Meta {
    pub page_size: usize,
    /// The highest page number in use.
    pub last_page: u64,
    pub txn_id: u64,
    free: Tree,
    main: Tree,
}

/// What a check found wrong with the file, in words a person can act on.
#[derive(Debug, Clone, PartialEq)]
pub struct Damage(pub String);

/// What [`walk`] visited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalkReport {
    /// Pages visited per named database (branch, leaf and overflow).
    pub pages: Vec<(String, u64)>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Reads the meta pages of `file`; `None` when neither is valid (not an LMDB file).
pub fn read_meta(file: &File) -> std::io::Result<Option<Meta>> {
    // The first meta page sits at offset 0 whatever the page size; it records the size,
    // which says where the second one is.
    let mut first = vec![0u8; 4096];
    let n = file.read_at(&mut first, 0)?;
    first.truncate(n);
    let Some(a) = parse_meta(&first) else {
        return Ok(None);
    };
    let mut second = vec![0u8; a.page_size];
    let n = file.read_at(&mut second, a.page_size as u64)?;
    second.truncate(n);
    Ok(Some(match parse_meta(&second) {
        Some(b) if b.txn_id > a.txn_id => b,
        _ => a,
    }))
}

fn parse_meta(page: &[u8]) -> Option<Meta> {
    if page.len() < PAGE_HEADER + 136 || u16_at(page, 10) & P_META == 0 {
        return None;
    }
    let m = &page[PAGE_HEADER..];
    if u32_at(m, 0) != MAGIC {
        return None;
    }
    // The free tree's record keeps the page size in its padding word.
    let page_size = u32_at(m, 24) as usize;
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return None;
    }
    Some(Meta {
        page_size,
        free: Tree::read(&m[24..24 + DB_RECORD]),
        main: Tree::read(&m[24 + DB_RECORD..24 + 2 * DB_RECORD]),
        last_page: u64_at(m, 24 + 2 * DB_RECORD),
        txn_id: u64_at(m, 24 + 2 * DB_RECORD + 8),
    })
}

/// The check made before a store's file is mapped: `Err` when the file cannot be read
/// without a fault. A missing or empty file (a new store) passes; so does a file LMDB does
/// not recognise, which LMDB itself then refuses.
pub fn check_on_open(path: &Path) -> std::io::Result<Result<(), Damage>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(())),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Ok(()));
    }
    let Some(meta) = read_meta(&file)? else {
        return Ok(Ok(()));
    };
    let needed = (meta.last_page + 1).saturating_mul(meta.page_size as u64);
    if len >= needed {
        return Ok(Ok(()));
    }
    // Shorter than the pages in use: damaged, unless every page the trees reach is there
    // (pages allocated and freed within one transaction are never written).
    Ok(walk_file(&file, &meta, len).map(|_| ()))
}

/// Visits every page reachable from the current meta page of the file at `path`.
pub fn walk(path: &Path) -> std::io::Result<Result<WalkReport, Damage>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let Some(meta) = read_meta(&file)? else {
        return Ok(Err(Damage(format!(
            "{} has no valid meta page: it is not an LMDB file, or its first pages were \
             overwritten",
            path.display()
        ))));
    };
    Ok(walk_file(&file, &meta, len))
}

fn walk_file(file: &File, meta: &Meta, len: u64) -> Result<WalkReport, Damage> {
    let mut w = Walker {
        file,
        page_size: meta.page_size,
        file_pages: len / meta.page_size as u64,
        counts: HashMap::new(),
        named: Vec::new(),
        buf: vec![0u8; meta.page_size],
    };
    w.tree("the free-page list", meta.free, false)?;
    w.tree("the database directory", meta.main, true)?;
    for (name, tree) in std::mem::take(&mut w.named) {
        w.tree(&name, tree, false)?;
    }
    let mut pages: Vec<(String, u64)> = w.counts.into_iter().collect();
    pages.sort();
    Ok(WalkReport { pages })
}

struct Walker<'f> {
    file: &'f File,
    page_size: usize,
    file_pages: u64,
    counts: HashMap<String, u64>,
    /// Named databases found in the directory, walked after it.
    named: Vec<(String, Tree)>,
    buf: Vec<u8>,
}

impl Walker<'_> {
    fn tree(&mut self, name: &str, tree: Tree, directory: bool) -> Result<(), Damage> {
        if tree.root == NO_PAGE {
            return Ok(());
        }
        self.page(name, tree.root, tree.depth.max(1), directory)
    }

    /// Reads page `pgno` into the buffer, checking it is inside the file and says it is
    /// itself.
    fn load(&mut self, name: &str, pgno: u64) -> Result<(), Damage> {
        if pgno >= self.file_pages {
            return Err(Damage(format!(
                "{name} needs page {pgno}, but the file ends at page {}: it was truncated",
                self.file_pages
            )));
        }
        let at = pgno * self.page_size as u64;
        self.file
            .read_exact_at(&mut self.buf, at)
            .map_err(|e| Damage(format!("{name}: page {pgno} cannot be read: {e}")))?;
        let said = u64_at(&self.buf, 0);
        if said != pgno {
            return Err(Damage(format!(
                "{name}: page {pgno} holds something else (its header says page {said}); the \
                 file was overwritten there"
            )));
        }
        Ok(())
    }

    /// Walks the subtree at `pgno`, `levels` deep at most (a cycle in a damaged file ends
    /// at the depth the tree's record gives).
    fn page(&mut self, name: &str, pgno: u64, levels: u16, directory: bool) -> Result<(), Damage> {
        self.load(name, pgno)?;
        *self.counts.entry(name.to_string()).or_default() += 1;
        let flags = u16_at(&self.buf, 10);
        let bad = |what: &str| {
            Damage(format!(
                "{name}: page {pgno} {what}; the file was damaged there"
            ))
        };
        if flags & (P_BRANCH | P_LEAF) == 0 || flags & P_OVERFLOW != 0 {
            return Err(bad(&format!("is not a tree page (flags {flags:#x})")));
        }
        if flags & P_LEAF2 != 0 {
            return Ok(()); // fixed-size duplicates: no nodes to follow
        }
        let (lower, upper) = (
            usize::from(u16_at(&self.buf, 12)),
            usize::from(u16_at(&self.buf, 14)),
        );
        if lower < PAGE_HEADER || lower > upper || upper > self.page_size {
            return Err(bad("has impossible free-space bounds"));
        }
        let nodes = self
            .nodes(lower, upper, flags & P_BRANCH != 0)
            .map_err(|what| bad(&what))?;
        if flags & P_BRANCH != 0 {
            if levels <= 1 {
                return Err(bad("is a branch where the tree should end"));
            }
            for node in nodes {
                self.page(name, node.child, levels - 1, directory)?;
            }
            return Ok(());
        }
        for node in nodes {
            if node.flags & F_BIGDATA != 0 {
                self.overflow(name, node.overflow, node.data_len)?;
            } else if directory && node.flags & F_SUBDATA != 0 {
                self.named.push((node.key, node.tree));
            } else if node.flags & F_DUPDATA != 0 && node.flags & F_SUBDATA != 0 {
                self.tree(name, node.tree, false)?;
            }
        }
        Ok(())
    }

    /// The nodes of the page in the buffer, each checked to lie inside the page. A branch
    /// node's size and flag words are its child's page number instead.
    fn nodes(&self, lower: usize, upper: usize, branch: bool) -> Result<Vec<Node>, String> {
        let b = &self.buf;
        let count = (lower - PAGE_HEADER) / 2;
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let at = usize::from(u16_at(b, PAGE_HEADER + 2 * i));
            if at < upper || at + NODE_HEADER > self.page_size {
                return Err(format!("has node {i} outside the page"));
            }
            let (lo, hi, flags, ksize) = (
                u64::from(u16_at(b, at)),
                u64::from(u16_at(b, at + 2)),
                u16_at(b, at + 4),
                usize::from(u16_at(b, at + 6)),
            );
            let key_end = at + NODE_HEADER + ksize;
            if key_end > self.page_size {
                return Err(format!("has node {i} with a key past the page's end"));
            }
            let key = String::from_utf8_lossy(&b[at + NODE_HEADER..key_end]).into_owned();
            let data_len = (lo | (hi << 16)) as usize;
            let data = |len: usize| {
                (key_end + len <= self.page_size)
                    .then(|| &b[key_end..key_end + len])
                    .ok_or_else(|| format!("has node {i} with data past the page's end"))
            };
            let mut node = Node {
                key,
                flags,
                child: lo | (hi << 16) | (u64::from(flags) << 32),
                data_len,
                overflow: 0,
                tree: Tree {
                    depth: 0,
                    root: NO_PAGE,
                },
            };
            if branch {
                node.flags = 0;
            } else if flags & F_BIGDATA != 0 {
                node.overflow = u64_at(data(8)?, 0);
            } else if flags & F_SUBDATA != 0 {
                node.tree = Tree::read(data(DB_RECORD)?);
            } else {
                data(data_len)?;
            }
            out.push(node);
        }
        Ok(out)
    }

    /// Checks an overflow run (a value too large for a leaf) is whole.
    fn overflow(&mut self, name: &str, pgno: u64, len: usize) -> Result<(), Damage> {
        self.load(name, pgno)?;
        let flags = u16_at(&self.buf, 10);
        let pages = u64::from(u32_at(&self.buf, 12));
        let needed = (PAGE_HEADER + len).div_ceil(self.page_size) as u64;
        if flags & P_OVERFLOW == 0 || pages < needed {
            return Err(Damage(format!(
                "{name}: page {pgno} should start a run of {needed} pages holding a large \
                 value, but does not; the file was damaged there"
            )));
        }
        if pgno + pages > self.file_pages {
            return Err(Damage(format!(
                "{name}: a large value on pages {pgno}–{} runs past the end of the file (page \
                 {}): it was truncated",
                pgno + pages - 1,
                self.file_pages
            )));
        }
        *self.counts.entry(name.to_string()).or_default() += pages;
        Ok(())
    }
}

struct Node {
    key: String,
    flags: u16,
    /// A branch node's child page.
    child: u64,
    data_len: usize,
    /// A leaf node's overflow page (`F_BIGDATA`).
    overflow: u64,
    /// A leaf node's sub-database (`F_SUBDATA`).
    tree: Tree,
}
