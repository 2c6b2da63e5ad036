//! The workbench view's requests (issue 23): every request of every design of a pattern
//! can be reached, however many there are.

use cosmoscope::tui::state::View;
use cosmoscope::workbench::Report;

use crate::support::tui_store::*;

/// The recorded report, with Q6's v1 design grown to 301 requests (as a real blog-v1 run
/// issues for it), each named by its number.
fn report() -> Report {
    let mut report: Report = serde_json::from_str(include_str!("../../data/workbench_report.json"))
        .expect("the recorded report parses");
    let q6 = report
        .patterns
        .iter_mut()
        .find(|p| p.id == "Q6")
        .expect("Q6");
    let v1 = q6
        .designs
        .0
        .iter_mut()
        .find(|d| d.design == "v1")
        .expect("v1");
    let model = v1.operations[0].clone();
    v1.operations = (1..=301)
        .map(|n| {
            let mut op = model.clone();
            op.setup = false;
            op.detail = format!("request number {n}");
            op
        })
        .collect();
    v1.requests = 301;
    report
}

#[test]
fn every_request_of_every_design_is_reachable() {
    let mut s = store(140, 45);
    let h = &mut s.h;
    h.keys("5");
    h.app.workbench.report = Some(report());
    assert_eq!(h.app.view, View::Workbench);
    // Q6 is the second row.
    h.keys("j");
    let frame = h.render();
    assert!(frame.contains("v1: requests 1–"), "{frame}");
    assert!(frame.contains("of 301"), "{frame}");
    assert!(frame.contains("request number 1 "), "{frame}");
    // Paging reaches the last request.
    for _ in 0..400 {
        h.keys("<pagedown>");
    }
    let frame = h.render();
    assert!(frame.contains("request number 301"), "{frame}");
    assert!(frame.contains("v1: requests 301–301 of 301"), "{frame}");
    // → goes to v2's requests, then v3's; ← comes back round.
    h.keys("l");
    let frame = h.render();
    assert!(frame.contains("▸ v2:"), "{frame}");
    assert!(frame.contains("v2: requests 1–1 of 1"), "{frame}");
    h.keys("l");
    assert!(h.render().contains("v3: requests 1–1 of 1"));
    h.keys("l");
    assert!(h.render().contains("v1: requests 1–"));
    h.keys("h");
    assert!(h.render().contains("▸ v3:"));
    // Another pattern starts at its first request.
    h.keys("k");
    assert!(h.render().contains("v3: requests 1–"));
}

#[test]
fn a_click_on_a_pattern_selects_it() {
    let mut s = store(140, 45);
    let h = &mut s.h;
    h.keys("5");
    h.app.workbench.report = Some(report());
    h.keys("<tab>");
    let frame = h.render();
    let (x, y) = frame
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let at = l.find("││Q6")?;
            Some((l[..at].chars().count() as u16 + 2, y as u16))
        })
        .unwrap_or_else(|| panic!("no Q6 row:\n{frame}"));
    h.click(x, y);
    assert_eq!(h.app.workbench.selected, 1);
    assert!(h.render().contains("▸ v1:"), "Q6's detail");
}
