//! The modules of each crate point one way: no module imports, directly or through others, a
//! module that imports it back. A layer below (`dom`) never reaches into a layer above
//! (`site`), so each can be read, tested and changed knowing only what lies beneath it.
//!
//! The check reads the sources, not the compiler's view: every `crate::…`, `super::…` and
//! `self::…` path (in `use` declarations, with their `{…}` groups, and in code) is resolved to
//! the longest module it names, and the module graph must have no cycle. A module's use of its
//! own ancestors (a child naming its parent's items) is not counted: the parent declares the
//! child, and Rust's privacy makes that direction the natural one for shared types.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `root` as its module path (`dom/mod.rs` → `["dom"]`).
fn modules(root: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).expect("source folder") {
            let path = entry.expect("folder entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .with_extension("");
            let mut parts: Module = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The source without `//` comments (a path named in a comment is no import).
fn code_of(source: &str) -> String {
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a `{…}` group names, each as segments, nested groups expanded and aliases
/// (`as name`) left out. `text` starts just after the group's `{`; returns the paths and the
/// number of characters read, its closing `}` included.
fn group(text: &[char]) -> (Vec<Vec<String>>, usize) {
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut alias = false;
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if is_ident(c) {
            let start = i;
            while i < text.len() && is_ident(text[i]) {
                i += 1;
            }
            let word: String = text[start..i].iter().collect();
            if alias {
                alias = false;
            } else if word == "as" {
                alias = true;
            } else {
                current.push(word);
            }
            continue;
        }
        match c {
            '{' => {
                let (inner, len) = group(&text[i + 1..]);
                for path in inner {
                    out.push(current.iter().cloned().chain(path).collect());
                }
                current.clear();
                i += len;
            }
            ',' if !current.is_empty() => out.push(std::mem::take(&mut current)),
            '}' => {
                if !current.is_empty() {
                    out.push(current);
                }
                return (out, i + 1);
            }
            _ => {}
        }
        i += 1;
    }
    (out, text.len())
}

/// Every module path that `code` (the source of `module`) names through `crate`, `super` or
/// `self`, as segments from the crate root (not yet resolved to a module).
fn named_paths(module: &Module, code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0 || !is_ident(chars[i - 1]);
        let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| rest.starts_with(h));
        let (Some(head), true) = (head, at_word) else {
            i += 1;
            continue;
        };
        let mut base: Vec<String> = match head {
            "crate::" => Vec::new(),
            "super::" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => module.clone(),
        };
        i += head.len();
        // The segments after the head, up to the end of the path or a `{` group.
        loop {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word == "super" {
                base.pop();
            } else if !word.is_empty() {
                base.push(word);
            }
            if i + 1 < chars.len() && chars[i] == ':' && chars[i + 1] == ':' {
                i += 2;
                if i < chars.len() && chars[i] == '{' {
                    let (paths, len) = group(&chars[i + 1..]);
                    for path in paths {
                        let path = path.into_iter().filter(|s| s != "self");
                        out.push(base.iter().cloned().chain(path).collect());
                    }
                    i += 1 + len;
                    break;
                }
                continue;
            }
            out.push(base);
            break;
        }
    }
    out
}

/// The module graph: module → the modules it names, its own ancestors and itself left out.
fn graph(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules(root);
    let mut edges = BTreeMap::new();
    for (module, path) in &modules {
        let code = code_of(&fs::read_to_string(path).expect("readable source"));
        let mut targets = BTreeSet::new();
        for named in named_paths(module, &code) {
            let Some(target) = (0..=named.len())
                .rev()
                .map(|len| named[..len].to_vec())
                .find(|prefix| modules.contains_key(prefix))
            else {
                continue;
            };
            if !module.starts_with(&target) {
                targets.insert(target);
            }
        }
        edges.insert(module.clone(), targets);
    }
    edges
}

/// A cycle of the graph, if there is one, as the modules along it.
fn cycle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark: BTreeMap<&Module, Mark> = edges.keys().map(|m| (m, Mark::New)).collect();
    for start in edges.keys() {
        if mark[start] != Mark::New {
            continue;
        }
        // Depth-first, iteratively: the path of open modules and, for each, its next edge.
        let mut path: Vec<(&Module, Vec<&Module>)> = Vec::new();
        mark.insert(start, Mark::Open);
        path.push((start, edges[start].iter().rev().collect()));
        while let Some((node, next)) = path.last_mut() {
            let node = *node;
            match next.pop() {
                Some(target) => match mark.get(target).copied() {
                    Some(Mark::New) => {
                        mark.insert(target, Mark::Open);
                        path.push((target, edges[target].iter().rev().collect()));
                    }
                    Some(Mark::Open) => {
                        let from = path.iter().position(|(m, _)| *m == target).unwrap_or(0);
                        return Some(path[from..].iter().map(|(m, _)| (*m).clone()).collect());
                    }
                    _ => {}
                },
                None => {
                    mark.insert(node, Mark::Done);
                    path.pop();
                }
            }
        }
    }
    None
}

fn source_root(crate_dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src")
}

fn assert_no_cycle(crate_dir: &str) {
    let edges = graph(&source_root(crate_dir));
    assert!(
        edges.len() > 5,
        "{crate_dir}: only {} modules found",
        edges.len()
    );
    if let Some(cycle) = cycle(&edges) {
        let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
        panic!(
            "{crate_dir}: import circle {} -> {}",
            names.join(" -> "),
            names[0]
        );
    }
}

#[test]
fn operators_modules_point_one_way() {
    assert_no_cycle("operators");
}

#[test]
fn jobs_modules_point_one_way() {
    assert_no_cycle("jobs");
}

#[test]
fn tests_modules_point_one_way() {
    assert_no_cycle("tests");
}

#[test]
fn the_check_sees_a_circle_and_the_paths_it_follows() {
    let module = |path: &str| -> Module { path.split("::").map(String::from).collect() };
    // `use` groups, nested groups, `self`, aliases and `super`.
    let named = named_paths(
        &module("site::labels"),
        "use crate::dom::{self, text::{PageText, readable}, Dom as D};\n\
         use super::site_level::HostModel;\nlet x = super::super::fractions::of(1);",
    );
    let named: BTreeSet<String> = named.iter().map(|p| p.join("::")).collect();
    for expected in [
        "dom",
        "dom::text::PageText",
        "dom::text::readable",
        "dom::Dom",
        "site::site_level::HostModel",
        "fractions::of",
    ] {
        assert!(named.contains(expected), "{expected} not in {named:?}");
    }
    // A circle of three, and a graph without one.
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    edges.insert(module("a"), [module("b")].into());
    edges.insert(module("b"), [module("c")].into());
    edges.insert(module("c"), BTreeSet::new());
    assert_eq!(cycle(&edges), None);
    edges.insert(module("c"), [module("a")].into());
    assert_eq!(cycle(&edges).map(|c| c.len()), Some(3));
}
