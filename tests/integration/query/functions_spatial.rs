//! The documented spatial examples, called through the public function registry.

// Coordinates are copied verbatim from the docs, digits beyond f64 precision included.
#![allow(clippy::excessive_precision)]

use cosmoscope::query::functions::{FnContext, lookup};
use cosmoscope::query::value::Val;
use serde_json::{Value, json};

const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 0,
    seed: 0,
};

fn eval(name: &str, args: &[Value]) -> Option<Value> {
    let spec = lookup(name).unwrap_or_else(|| panic!("{name} is not registered"));
    assert!((spec.min_args..=spec.max_args).contains(&args.len()));
    let args: Vec<Val> = args.iter().map(Val::from_json).collect();
    (spec.eval)(&args, &CTX).to_json()
}

fn point(lon: f64, lat: f64) -> Value {
    json!({"type": "Point", "coordinates": [lon, lat]})
}

fn polygon(ring: Value) -> Value {
    json!({"type": "Polygon", "coordinates": [ring]})
}

fn number(v: Option<Value>) -> f64 {
    v.and_then(|v| v.as_f64()).expect("a number")
}

#[test]
fn st_distance_example() {
    let target = point(-122.11758113953535, 47.66901087006131);
    // (item location, documented distance in km, tolerance in m): the geodesic on WGS-84
    // matches to 8e-5 m and 0.08 m.
    let rows = [
        (
            point(-122.12826822304672, 47.63980239335718),
            3.345269817267368,
            1e-3,
        ),
        (
            point(-96.84368664765994, 46.81297794314663),
            1907.438421299902,
            0.1,
        ),
    ];
    for (location, km, tolerance) in rows {
        let meters = number(eval("ST_DISTANCE", &[location, target.clone()]));
        assert!(
            (meters - km * 1000.0).abs() < tolerance,
            "{meters} vs {km} km"
        );
    }
}

#[test]
fn st_within_st_intersects_examples() {
    let campus = polygon(json!([
        [-122.13236581015025, 47.64606476313813],
        [-122.13221982500913, 47.633757091363975],
        [-122.11840598103835, 47.641749416109235],
        [-122.12061400629656, 47.64589264786028],
        [-122.13236581015025, 47.64606476313813]
    ]));
    let highway = polygon(json!([
        [-122.13693695285855, 47.64996065621003],
        [-122.1351662656516, 47.64627863318731],
        [-122.13488295569863, 47.646326350048696],
        [-122.1366182291613, 47.650016321952904],
        [-122.13693695285855, 47.64996065621003]
    ]));
    let north_campus = polygon(json!([
        [-122.14034847687708, 47.6494835188378],
        [-122.14014779899375, 47.64625477474044],
        [-122.13256925774829, 47.646207057813655],
        [-122.13254564858545, 47.64941990019193],
        [-122.14034847687708, 47.6494835188378]
    ]));
    let hq = point(-122.12824857332558, 47.6395516675712);
    let rows = [
        ("ST_WITHIN", hq.clone(), campus.clone(), json!(true)),
        (
            "ST_WITHIN",
            point(-122.10, 47.64),
            campus.clone(),
            json!(false),
        ),
        (
            "ST_INTERSECTS",
            highway.clone(),
            north_campus.clone(),
            json!(true),
        ),
        ("ST_INTERSECTS", hq, north_campus, json!(false)),
        ("ST_INTERSECTS", highway, json!("not geojson"), Value::Null),
    ];
    for (name, a, b, want) in rows {
        assert_eq!(eval(name, &[a, b]).unwrap_or(Value::Null), want, "{name}");
    }
    for name in ["ST_DISTANCE", "ST_WITHIN", "ST_INTERSECTS"] {
        assert!(lookup(name).unwrap().uses_index, "{name}");
    }
}

#[test]
fn st_isvalid_examples() {
    let good = point(-84.38876194345323, 33.75682784306348);
    let bad = point(133.75682784306348, -184.38876194345323);
    let open = polygon(json!([[31.8, -5], [31.8, -4.7], [32, -4.7], [32, -5]]));
    let rows = [
        ("ST_ISVALID", good.clone(), json!(true)),
        ("ST_ISVALID", bad.clone(), json!(false)),
        ("ST_ISVALIDDETAILED", good, json!({"valid": true})),
        (
            "ST_ISVALIDDETAILED",
            bad,
            json!({"valid": false, "reason": "Latitude values must be between -90 and 90 degrees."}),
        ),
        (
            "ST_ISVALIDDETAILED",
            open,
            json!({"valid": false, "reason": "The Polygon input is not valid because the start and end points of the ring number 1 are not the same. Each ring of a polygon must have the same start and end points."}),
        ),
    ];
    for (name, arg, want) in rows {
        assert_eq!(eval(name, &[arg]).unwrap_or(Value::Null), want, "{name}");
    }
}

#[test]
fn st_area_example() {
    let square = polygon(json!([
        [31.8, -5],
        [32, -5],
        [32, -4.7],
        [31.8, -4.7],
        [31.8, -5]
    ]));
    // Documented 735970283.0522614 m²; the authalic-sphere area is 0.06 m² above it.
    let area = number(eval("ST_AREA", &[square]));
    assert!((area - 735_970_283.052_261_4).abs() < 1.0, "{area}");
    assert_eq!(number(eval("ST_AREA", &[point(31.8, -5.0)])), 0.0);
}
