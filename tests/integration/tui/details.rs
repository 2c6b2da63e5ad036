//! The container details pane (issue 23): a container's key, throughput and per-partition
//! budget, statistics, physical partitions, TTL, unique keys, indexing policy, scripts, and
//! for a bundled sample's container the note on its design.

use cosmoscope::engine::{Backend, ContainerSettings, Throughput};
use cosmoscope::tui::state::View;

use crate::support::tui_store::*;

#[test]
fn i_on_a_container_shows_its_settings_and_statistics() {
    let mut s = store(120, 40);
    let mut settings = ContainerSettings::new(vec!["/tenant".into(), "/user".into()]);
    settings.throughput = Throughput::Autoscale(20_000);
    settings.default_ttl = Some(3600);
    settings.unique_keys = vec![vec!["/email".into()]];
    s.engine
        .create_container(DB, "accounts", settings)
        .expect("create");
    let h = &mut s.h;
    h.keys("r <enter>");
    select(h, "accounts");
    h.keys("i");
    assert_eq!(h.app.view, View::Item);
    let frame = h.render();
    for text in [
        "Container shop/accounts · details",
        "/tenant, /user (MultiHash, version 2)",
        "autoscale up to 20000 RU/s (from 2000 RU/s)",
        "2 physical partitions · 10000 RU/s per partition",
        "0 items · 0 B · 0 RU consumed",
        "3600 s after an item's last write",
        "/email",
        "── indexing policy ──",
        "\"indexingMode\": \"consistent\"",
    ] {
        assert!(frame.contains(text), "{text:?} in\n{frame}");
    }
    // Further down: scripts; scrolling gets there.
    h.keys("<tab> G");
    let frame = h.render();
    assert!(
        frame.contains("0 stored procedures · 0 triggers · 0 UDFs"),
        "{frame}"
    );
}

#[test]
fn the_pane_lists_every_physical_partition_with_its_share() {
    let mut s = store(120, 40);
    let h = &mut s.h;
    h.keys("r <enter>");
    select(h, ORDERS);
    h.keys("i");
    let frame = h.render();
    assert!(frame.contains("manual 24000 RU/s"), "{frame}");
    assert!(
        frame.contains("4 physical partitions · 6000 RU/s per partition"),
        "{frame}"
    );
    assert!(frame.contains("12 items"), "{frame}");
    for range in 0..4 {
        assert!(
            frame.contains(&format!("range {range:<3} [")),
            "range {range} in\n{frame}"
        );
    }
    assert!(frame.contains("25.0% of keys"), "{frame}");
    // Selecting an item replaces the pane.
    h.keys("<enter>");
    select(h, "range 3");
    h.keys("<enter> j <enter> j <enter>");
    assert!(h.app.details.is_none());
    assert!(h.app.item.is_some());
}

#[test]
fn a_sample_containers_pane_explains_its_design() {
    let s = store(120, 40);
    let mut progress = |_: &cosmoscope::samples::Progress| true;
    cosmoscope::samples::load(
        &*s.engine,
        "modeling",
        &cosmoscope::samples::LoadOptions::default(),
        &mut progress,
    )
    .expect("the modelling examples load");
    let sets = cosmoscope::samples::list().expect("the sets");
    let (db, c, note) = sets
        .iter()
        .filter(|set| set.name == "modeling")
        .flat_map(|set| &set.databases)
        .flat_map(|d| d.containers.iter().map(move |c| (d, c)))
        .find_map(|(d, c)| c.note.clone().map(|n| (d.id.clone(), c.id.clone(), n)))
        .expect("a container with a note");
    let mut s = s;
    let h = &mut s.h;
    h.keys("r");
    expand(h, &[&db]);
    select(h, &c);
    h.keys("i");
    let shown = h.app.details.as_ref().expect("the pane");
    assert_eq!(shown.details.note.as_deref(), Some(note.as_str()));
    h.keys("<tab> G");
    let frame = h.render();
    assert!(
        frame.contains("── about this sample's design ──"),
        "{frame}"
    );
    let start: String = note.chars().take(30).collect();
    assert!(frame.contains(&start), "{start:?} in\n{frame}");
}

#[test]
fn snapshots_of_the_details_pane() {
    for (w, ht) in [(80, 24), (120, 40)] {
        let mut s = store(w, ht);
        let h = &mut s.h;
        h.keys("r <enter>");
        select(h, ORDERS);
        h.keys("i");
        zero_range_meters(h);
        let frame = h.render();
        insta::with_settings!({
            omit_expression => true,
            snapshot_path => "../../snapshots",
        }, {
            insta::assert_snapshot!(format!("details_{w}x{ht}"), frame);
        });
    }
}
