//! Data tables read whole: a table whose cells are likely enough on average is content, every
//! cell of it.

use html5ever::local_name;

use crate::dom::Dom;
use crate::page_models::content::blocks::Blocks;

/// A data table whose blocks hold, weighted by characters, a mean probability of at least this
/// is content whole.
pub const DATA_TABLE_SHARE: f64 = 0.3;

/// A data table is read whole: a course's schedule, a standings table, a spec sheet, a price
/// comparison. The trees judge its cells one by one, and short cells ("Sep 11", "Topic",
/// "instructor notes, slides") sit below ½ beside a confident paragraph, so the threshold alone
/// keeps a row's longest cell and drops the rest (sitanchen.com's course page loses its whole
/// schedule). So when a table's blocks reach [`DATA_TABLE_SHARE`] on average, every block of
/// it is content, as the pooled items of a run are ([`crate::page_models::content::items`]).
/// A data table is a `<table>` with a header cell (`<th>` or `<thead>`) and no table inside
/// it: a layout table (a page built of tables, its menus in cells) nests tables and rarely
/// heads its columns; counting tables without a header as well costs L3S-GN1's older,
/// table-built news pages F1. Held out, the rule gains a little on WCXB's collections,
/// documentation, service and product pages and lowers no group (docs/evaluation.md).
pub(super) fn keep_data_tables(
    dom: &Dom,
    blocks: &Blocks,
    probability: &[f32],
    calls: &mut [bool],
) {
    #[derive(Default)]
    struct Table {
        header: bool,
        nested: bool,
        /// Σ p·c and Σ c over the table's blocks.
        weighted: f64,
        chars: f64,
    }
    // One pass in document order (a parent before its children): each node's nearest
    // enclosing table, as an index into `tables`, and what each table holds.
    const NO_TABLE: u32 = u32::MAX;
    let mut table = vec![NO_TABLE; dom.len()];
    let mut tables: Vec<Table> = Vec::new();
    for i in 0..dom.len() {
        let outer = dom.parent(i).map_or(NO_TABLE, |p| table[p]);
        table[i] = outer;
        let Some(tag) = dom.tag(i) else { continue };
        match *tag {
            local_name!("table") => {
                if let Some(outer) = tables.get_mut(outer as usize) {
                    outer.nested = true;
                }
                table[i] = tables.len() as u32;
                tables.push(Table::default());
            }
            local_name!("th") | local_name!("thead") => {
                if let Some(outer) = tables.get_mut(outer as usize) {
                    outer.header = true;
                }
            }
            _ => {}
        }
    }
    if tables.is_empty() {
        return;
    }
    for ((&owner, stats), &p) in blocks.owners.iter().zip(&blocks.stats).zip(probability) {
        if let Some(t) = tables.get_mut(table[owner as usize] as usize) {
            let chars = f64::from(stats.chars.max(1));
            t.weighted += f64::from(p) * chars;
            t.chars += chars;
        }
    }
    // A table asked about here holds a block, so its characters are at least 1.
    for (call, &owner) in calls.iter_mut().zip(&blocks.owners) {
        *call |= tables
            .get(table[owner as usize] as usize)
            .is_some_and(|t| t.header && !t.nested && t.weighted >= DATA_TABLE_SHARE * t.chars);
    }
}

#[cfg(test)]
mod tests {
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks;
    use crate::page_models::content::testing::calls_of;
    use crate::page_models::content::Rule;

    #[test]
    fn a_data_table_is_read_whole() {
        let dom = dom::parse(
            "<body><p>The course meets twice a week; the schedule below lists every lecture.</p>\
             <table><tr><th>Date</th><th>Topic</th></tr><tr><td>Sep 6</td><td>Mixtures</td></tr></table>\
             <table><tr><td>Menu one</td><td>Menu two</td></tr></table>\
             <table><tr><th>Layout</th></tr><tr><td><table><tr><td>Inner cell</td></tr></table></td></tr></table>\
             </body>",
            512,
        );
        let sums = summarize(&dom, "example.com");
        let blocks = blocks::blocks(&dom);
        assert_eq!(blocks.len(), 9);
        // The schedule's cells average 0.36 by characters: the whole table is content. The
        // table without a header cell and the one with a table inside it (a layout table) are
        // judged cell by cell, as is the inner table, which has no header of its own.
        let p = [0.9, 0.2, 0.3, 0.4, 0.45, 0.45, 0.45, 0.45, 0.45];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        let mut expected = [true, true, true, true, true, false, false, false, false];
        assert_eq!(calls, expected);
        // Under the mean share, the table's cells keep their own calls.
        let p = [0.9, 0.1, 0.1, 0.6, 0.2, 0.45, 0.45, 0.45, 0.45];
        let calls = calls_of(&dom, &sums, &blocks, &p, Rule::Blocks);
        expected[1..5].copy_from_slice(&[false, false, true, false]);
        assert_eq!(calls, expected);
    }
}
