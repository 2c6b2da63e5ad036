//! The documented date and time examples, called through the public function registry.
//! Each row is (function, arguments, expected result; `null` standing for undefined).

use cosmoscope::query::functions::{FnContext, lookup};
use cosmoscope::query::value::Val;
use serde_json::{Value, json};

/// 2024-10-14T14:20:30.666Z: the AGO/NOW pages assume 2024-10-14T14:20:30.6668888Z, and the
/// context carries milliseconds.
const CTX: FnContext = FnContext {
    clock: None,
    now_ticks: 17_289_156_306_660_000,
    seed: 7,
};

fn eval(name: &str, args: &Value) -> Option<Value> {
    let spec = lookup(name).unwrap_or_else(|| panic!("{name} is not registered"));
    let args: Vec<Val> = args
        .as_array()
        .expect("arguments are an array")
        .iter()
        .map(Val::from_json)
        .collect();
    assert!(
        (spec.min_args..=spec.max_args).contains(&args.len()),
        "{name} takes {}..={} arguments",
        spec.min_args,
        spec.max_args
    );
    (spec.eval)(&args, &CTX).to_json()
}

fn check(table: &[(&str, Value, Value)]) {
    for (name, args, want) in table {
        let got = eval(name, args).unwrap_or(Value::Null);
        // Counts beyond 2^53 (ticks) come back as JSON doubles: compare numbers by value.
        match (got.as_f64(), want.as_f64()) {
            (Some(g), Some(w)) => assert_eq!(g, w, "{name}({args})"),
            _ => assert_eq!(&got, want, "{name}({args})"),
        }
    }
}

#[test]
fn date_time_add_bin_diff() {
    let d = "2020-07-03T00:00:00.0000000";
    let b = "2021-01-08T18:35:00.0000000";
    let (x, y) = ("2019-02-04T16:00:00.0000000", "2018-03-05T05:00:00.0000000");
    check(&[
        (
            "DATETIMEADD",
            json!(["yyyy", 1, d]),
            json!("2021-07-03T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["mm", 1, d]),
            json!("2020-08-03T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["dd", 1, d]),
            json!("2020-07-04T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["hh", 1, d]),
            json!("2020-07-03T01:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["yyyy", -1, d]),
            json!("2019-07-03T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["mm", -1, d]),
            json!("2020-06-03T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["dd", -1, d]),
            json!("2020-07-02T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["hh", -1, d]),
            json!("2020-07-02T23:00:00.0000000Z"),
        ),
        (
            "DATETIMEADD",
            json!(["ss", -25, d]),
            json!("2020-07-02T23:59:35.0000000Z"),
        ),
        ("DATETIMEADD", json!(["week", 1, d]), Value::Null),
        ("DATETIMEADD", json!(["dd", 1.5, d]), Value::Null),
        ("DATETIMEADD", json!(["dd", 1, "July 3rd"]), Value::Null),
        (
            "DATETIMEBIN",
            json!([b, "dd"]),
            json!("2021-01-08T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEBIN",
            json!([b, "hh"]),
            json!("2021-01-08T18:00:00.0000000Z"),
        ),
        (
            "DATETIMEBIN",
            json!([b, "ss"]),
            json!("2021-01-08T18:35:00.0000000Z"),
        ),
        (
            "DATETIMEBIN",
            json!([b, "hh", 5]),
            json!("2021-01-08T15:00:00.0000000Z"),
        ),
        (
            "DATETIMEBIN",
            json!([b, "dd", 7]),
            json!("2021-01-07T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEBIN",
            json!([b, "dd", 7, "1601-01-01T00:00:00.0000000"]),
            json!("2021-01-04T00:00:00.0000000Z"),
        ),
        ("DATETIMEBIN", json!([b, "dd", 0]), Value::Null),
        (
            "DATETIMEBIN",
            json!([b, "dd", 7, "1600-01-01T00:00:00.0000000"]),
            Value::Null,
        ),
        ("DATETIMEBIN", json!([b, "yyyy"]), Value::Null),
        ("DATETIMEDIFF", json!(["yyyy", x, y]), json!(-1)),
        ("DATETIMEDIFF", json!(["mm", x, y]), json!(-11)),
        ("DATETIMEDIFF", json!(["dd", x, y]), json!(-336)),
        ("DATETIMEDIFF", json!(["diffDays", x, y]), Value::Null),
        ("DATETIMEDIFF", json!(["hh", x, y]), json!(-8075)),
        ("DATETIMEDIFF", json!(["ss", x, y]), json!(-29_070_000)),
        ("DATETIMEDIFF", json!(["yyyy", y, x]), json!(1)),
        ("DATETIMEDIFF", json!(["mm", y, x]), json!(11)),
        ("DATETIMEDIFF", json!(["dd", y, x]), json!(336)),
        ("DATETIMEDIFF", json!(["hh", y, x]), json!(8075)),
        ("DATETIMEDIFF", json!(["ss", y, x]), json!(29_070_000)),
    ]);
}

#[test]
fn date_time_parts_and_construction() {
    let p = "2016-05-29T08:30:00.1301617";
    check(&[
        (
            "DATETIMEFROMPARTS",
            json!([2017, 4, 20]),
            json!("2017-04-20T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEFROMPARTS",
            json!([2017, 4, 20, 0, 0, 0, 0]),
            json!("2017-04-20T00:00:00.0000000Z"),
        ),
        (
            "DATETIMEFROMPARTS",
            json!([2017, 4, 20, 13, 15, 20, 3_456_789]),
            json!("2017-04-20T13:15:20.3456789Z"),
        ),
        (
            "DATETIMEFROMPARTS",
            json!([2017, 4, 20, 13, 15]),
            json!("2017-04-20T13:15:00.0000000Z"),
        ),
        ("DATETIMEFROMPARTS", json!([-2000, -1, -1]), Value::Null),
        ("DATETIMEPART", json!(["yyyy", p]), json!(2016)),
        ("DATETIMEPART", json!(["mm", p]), json!(5)),
        ("DATETIMEPART", json!(["dd", p]), json!(29)),
        ("DATETIMEPART", json!(["hh", p]), json!(8)),
        ("DATETIMEPART", json!(["mi", p]), json!(30)),
        ("DATETIMEPART", json!(["ss", p]), json!(0)),
        ("DATETIMEPART", json!(["ms", p]), json!(130)),
        ("DATETIMEPART", json!(["mcs", p]), json!(130_161)),
        ("DATETIMEPART", json!(["ns", p]), json!(130_161_700)),
        ("DAY", json!(["2024-01-10"]), json!(10)),
        ("DAY", json!(["2000-12-12T10:00:00"]), json!(12)),
        ("DAY", json!(["1989-03-03T12:12:12.1234567Z"]), json!(3)),
        ("MONTH", json!(["2024-01-10"]), json!(1)),
        ("MONTH", json!(["2000-12-12T10:00:00"]), json!(12)),
        ("MONTH", json!(["1989-03-03T12:12:12.1234567Z"]), json!(3)),
        ("YEAR", json!(["2000-10-10"]), json!(2000)),
        ("YEAR", json!(["2024-01-10T14:15:20"]), json!(2024)),
        ("YEAR", json!(["1989-03-03T12:12:12.1234567Z"]), json!(1989)),
        ("YEAR", json!([2024]), Value::Null),
    ]);
}

#[test]
fn conversions_and_formatting() {
    check(&[
        (
            "DATETIMETOTICKS",
            json!(["2015-05-19T12:00:00.0000000"]),
            json!(14_320_368_000_000_000_i64),
        ),
        (
            "DATETIMETOTIMESTAMP",
            json!(["2015-05-19T12:00:00.0000000"]),
            json!(1_432_036_800_000_i64),
        ),
        (
            "TICKSTODATETIME",
            json!([15_973_607_943_002_652_i64]),
            json!("2020-08-13T23:19:54.3002652Z"),
        ),
        (
            "TICKSTODATETIME",
            json!([0]),
            json!("1970-01-01T00:00:00.0000000Z"),
        ),
        (
            "TICKSTODATETIME",
            json!([-116_444_736_000_000_000_i64]),
            json!("1601-01-01T00:00:00.0000000Z"),
        ),
        (
            "TIMESTAMPTODATETIME",
            json!([1_597_360_794_300_i64]),
            json!("2020-08-13T23:19:54.3000000Z"),
        ),
        (
            "TIMESTAMPTODATETIME",
            json!([0]),
            json!("1970-01-01T00:00:00.0000000Z"),
        ),
        (
            "TIMESTAMPTODATETIME",
            json!([-11_644_473_600_000_i64]),
            json!("1601-01-01T00:00:00.0000000Z"),
        ),
        ("TIMESTAMPTODATETIME", json!(["0"]), Value::Null),
        (
            "DATETIMEFORMAT",
            json!(["2024-10-10 14:40:20", "yyyyMMdd"]),
            json!("20241010"),
        ),
        (
            "DATETIMEFORMAT",
            json!(["2024-10-10 14:40:20", "yyyy-MM-dd [HH:mm:ss]"]),
            json!("2024-10-10 [14:40:20]"),
        ),
        (
            "DATETIMEFORMAT",
            json!([
                "2024-10-10 14:40:20",
                r"To\da\y i\s: yyyy-MM-ddTHH:mm:ss.fff"
            ]),
            json!("Today is: 2024-10-10T14:40:20.000"),
        ),
        (
            "DATETIMEFORMAT",
            json!([
                "2024-10-10 14:40:20",
                r"To\da\y i\s: yyyy-MM-ddTHH:mm:ss.FFF"
            ]),
            json!("Today is: 2024-10-10T14:40:20."),
        ),
    ]);
}

#[test]
fn current_time_functions() {
    check(&[
        (
            "GETCURRENTDATETIME",
            json!([]),
            json!("2024-10-14T14:20:30.6660000Z"),
        ),
        (
            "GETCURRENTDATETIMESTATIC",
            json!([]),
            json!("2024-10-14T14:20:30.6660000Z"),
        ),
        (
            "GETCURRENTTIMESTAMP",
            json!([]),
            json!(1_728_915_630_666_i64),
        ),
        (
            "GETCURRENTTIMESTAMPSTATIC",
            json!([]),
            json!(1_728_915_630_666_i64),
        ),
        (
            "GETCURRENTTICKS",
            json!([]),
            json!(17_289_156_306_660_000_i64),
        ),
        (
            "GETCURRENTTICKSSTATIC",
            json!([]),
            json!(17_289_156_306_660_000_i64),
        ),
        (
            "AGO",
            json!(["yyyy", 1]),
            json!("2023-10-14T14:20:30.6660000Z"),
        ),
        (
            "AGO",
            json!(["yyyy", -1]),
            json!("2025-10-14T14:20:30.6660000Z"),
        ),
        (
            "AGO",
            json!(["ss", 30]),
            json!("2024-10-14T14:20:00.6660000Z"),
        ),
        (
            "AGO",
            json!(["ms", 4]),
            json!("2024-10-14T14:20:30.6620000Z"),
        ),
        ("NOW", json!([]), json!("2024-10-14T14:20:30.6660000Z")),
        (
            "NOW",
            json!(["yyyy", 1]),
            json!("2025-10-14T14:20:30.6660000Z"),
        ),
        (
            "NOW",
            json!(["yyyy", -1]),
            json!("2023-10-14T14:20:30.6660000Z"),
        ),
        (
            "NOW",
            json!(["ss", 30]),
            json!("2024-10-14T14:21:00.6660000Z"),
        ),
        (
            "NOW",
            json!(["ms", 4]),
            json!("2024-10-14T14:20:30.6700000Z"),
        ),
    ]);
    // GetCurrent* cannot be served from the index; Day/Month/Year can.
    for name in [
        "GETCURRENTDATETIME",
        "GETCURRENTTICKS",
        "GETCURRENTTIMESTAMP",
        "DATETIMEPART",
    ] {
        assert!(!lookup(name).unwrap().uses_index, "{name}");
    }
    for name in ["DAY", "MONTH", "YEAR"] {
        assert!(lookup(name).unwrap().uses_index, "{name}");
    }
}
