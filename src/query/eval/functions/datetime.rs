//! Date and time built-ins: `GetCurrent*` (and their `*Static` twins), `DateTimeAdd`,
//! `DateTimeBin`, `DateTimeDiff`, `DateTimeFormat`, `DateTimeFromParts`, `DateTimePart`,
//! `DateTimeToTicks`, `DateTimeToTimestamp`, `TicksToDateTime`, `TimestampToDateTime`,
//! `Day`, `Month`, `Year`, `Ago` and `Now`, as documented per function in
//! MicrosoftDocs/azure-databases-docs (articles/cosmos-db/nosql/query/*.md) with the examples
//! of Azure-Samples/cosmos-db-nosql-query-samples.
//!
//! Instants are held as .NET-style ticks (100 ns) since 0001-01-01T00:00:00 UTC, the range the
//! service's `YYYY-MM-DDThh:mm:ss.fffffffZ` strings can express (years 0001–9999). Note that
//! the *numeric* ticks the functions exchange (`DateTimeToTicks`, `TicksToDateTime`,
//! `GetCurrentTicks`) count from the Unix epoch, as the pages and their examples show
//! (`TicksToDateTime(-116444736000000000)` is 1601-01-01).
//!
//! Every function returns `undefined` for a wrong-typed or invalid argument.

use chrono::{Datelike, NaiveDate, Weekday};

use super::{FnContext, FnSpec, scalar};
use crate::query::eval::value::Val;

const TICKS_PER_MICROSECOND: i64 = 10;
const TICKS_PER_MILLISECOND: i64 = 10_000;
const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_MINUTE: i64 = 60 * TICKS_PER_SECOND;
const TICKS_PER_HOUR: i64 = 60 * TICKS_PER_MINUTE;
const TICKS_PER_DAY: i64 = 24 * TICKS_PER_HOUR;
/// 0001-01-01 to 1970-01-01.
const UNIX_EPOCH_TICKS: i64 = 719_162 * TICKS_PER_DAY;
/// 0001-01-01 to 1601-01-01, the Windows epoch: `DateTimeBin` rejects earlier bin starts.
const WINDOWS_EPOCH_TICKS: i64 = 584_388 * TICKS_PER_DAY;
/// 9999-12-31T23:59:59.9999999.
const MAX_TICKS: i64 = 3_652_059 * TICKS_PER_DAY - 1;

pub const FUNCTIONS: &[FnSpec] = &[
    // The GetCurrent* pages say "doesn't use the index". The plain functions read the clock
    // per item, the static twins once (see `FnContext`).
    scalar("GETCURRENTDATETIME", 0, 0, false, get_current_date_time),
    scalar(
        "GETCURRENTDATETIMESTATIC",
        0,
        0,
        false,
        get_current_date_time_static,
    ),
    scalar("GETCURRENTTICKS", 0, 0, false, get_current_ticks),
    scalar(
        "GETCURRENTTICKSSTATIC",
        0,
        0,
        false,
        get_current_ticks_static,
    ),
    scalar("GETCURRENTTIMESTAMP", 0, 0, false, get_current_timestamp),
    scalar(
        "GETCURRENTTIMESTAMPSTATIC",
        0,
        0,
        false,
        get_current_timestamp_static,
    ),
    scalar("DATETIMEADD", 3, 3, false, date_time_add),
    scalar("DATETIMEBIN", 2, 4, false, date_time_bin),
    scalar("DATETIMEDIFF", 3, 3, false, date_time_diff),
    // "This function performs a full scan."
    scalar("DATETIMEFORMAT", 2, 2, false, date_time_format),
    scalar("DATETIMEFROMPARTS", 3, 7, false, date_time_from_parts),
    // "This function doesn't use the index."
    scalar("DATETIMEPART", 2, 2, false, date_time_part),
    scalar("DATETIMETOTICKS", 1, 1, false, date_time_to_ticks),
    scalar("DATETIMETOTIMESTAMP", 1, 1, false, date_time_to_timestamp),
    scalar("TICKSTODATETIME", 1, 1, false, ticks_to_date_time),
    scalar("TIMESTAMPTODATETIME", 1, 1, false, timestamp_to_date_time),
    // Day/Month/Year: "This function benefits from the use of a range index."
    scalar("DAY", 1, 1, true, day),
    scalar("MONTH", 1, 1, true, month),
    scalar("YEAR", 1, 1, true, year),
    scalar("AGO", 2, 2, false, ago),
    // NOW() or NOW(part, n); "This function performs a full scan."
    scalar("NOW", 0, 2, false, now),
];

// ---------------------------------------------------------------------------------------------
// Parts

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
}

impl Part {
    /// The names of the pages' part tables. Matched case-insensitively, as T-SQL date parts
    /// are (the pages only show lower case).
    fn parse(v: &Val) -> Option<Part> {
        let s = v.as_str()?.to_ascii_lowercase();
        Some(match s.as_str() {
            "year" | "yyyy" | "yy" => Part::Year,
            "month" | "mm" | "m" => Part::Month,
            "day" | "dd" | "d" => Part::Day,
            "hour" | "hh" => Part::Hour,
            "minute" | "mi" | "n" => Part::Minute,
            "second" | "ss" | "s" => Part::Second,
            "millisecond" | "ms" => Part::Millisecond,
            "microsecond" | "mcs" => Part::Microsecond,
            "nanosecond" | "ns" => Part::Nanosecond,
            _ => return None,
        })
    }

    /// Length of one unit in nanoseconds, for the fixed-length parts (day and finer).
    fn fixed_nanos(self) -> Option<i128> {
        Some(match self {
            Part::Year | Part::Month => return None,
            Part::Day => i128::from(TICKS_PER_DAY) * 100,
            Part::Hour => i128::from(TICKS_PER_HOUR) * 100,
            Part::Minute => i128::from(TICKS_PER_MINUTE) * 100,
            Part::Second => i128::from(TICKS_PER_SECOND) * 100,
            Part::Millisecond => 1_000_000,
            Part::Microsecond => 1_000,
            Part::Nanosecond => 1,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Instants

/// Broken-down form of a tick count.
#[derive(Debug, Clone, Copy)]
struct Civil {
    date: NaiveDate,
    hour: i64,
    minute: i64,
    second: i64,
    /// 100 ns units within the second, 0..=9_999_999.
    fraction: i64,
}

fn civil(ticks: i64) -> Option<Civil> {
    if !(0..=MAX_TICKS).contains(&ticks) {
        return None;
    }
    let days = ticks / TICKS_PER_DAY;
    let date = NaiveDate::from_num_days_from_ce_opt(i32::try_from(days).ok()? + 1)?;
    let rest = ticks % TICKS_PER_DAY;
    Some(Civil {
        date,
        hour: rest / TICKS_PER_HOUR,
        minute: rest % TICKS_PER_HOUR / TICKS_PER_MINUTE,
        second: rest % TICKS_PER_MINUTE / TICKS_PER_SECOND,
        fraction: rest % TICKS_PER_SECOND,
    })
}

fn date_ticks(date: NaiveDate) -> i64 {
    i64::from(date.num_days_from_ce() - 1) * TICKS_PER_DAY
}

fn in_range(ticks: i64) -> Option<i64> {
    (0..=MAX_TICKS).contains(&ticks).then_some(ticks)
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ`, the only form the service outputs.
fn format_iso(ticks: i64) -> Option<String> {
    let c = civil(ticks)?;
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
        c.date.year(),
        c.date.month(),
        c.date.day(),
        c.hour,
        c.minute,
        c.second,
        c.fraction
    ))
}

fn iso_val(ticks: Option<i64>) -> Val {
    ticks.and_then(format_iso).map(Val::str).unwrap_or_default()
}

/// A parsed date and time string.
#[derive(Debug, Clone, Copy)]
pub(super) struct Parsed {
    ticks: i64,
    /// Whether the string ended in `Z` (only `DateTimeFormat`'s `K` specifier looks at it).
    utc: bool,
}

/// Parses the service's ISO 8601 subset, as is-datetime.md describes it (so IS_DATETIME and
/// every date function agree on what a date is): `YYYY-MM-DD`, then nothing or `Z`, or `T` or
/// a space and `hh:mm:ss`, an optional `.` with 1–7 fraction digits (the service's precision
/// is 100 ns) and an optional `Z`. The date must exist and the time lie within a day.
///
/// The function pages ask for `YYYY-MM-DDThh:mm:ss.fffffffZ`, yet their own examples pass
/// strings without the `Z` (`DateTimeAdd("yyyy", 1, "2020-07-03T00:00:00.0000000")`), without
/// a fraction (`DAY("2000-12-12T10:00:00")`), without a time (`DAY("2024-01-10")`) and with a
/// space (`DateTimeFormat`), all of which that subset covers. UTC offsets other than `Z` and
/// times without seconds are rejected, as IS_DATETIME rejects them.
pub(super) fn parse_date_time(s: &str) -> Option<Parsed> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
        })
    };
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        u32::try_from(month).ok()?,
        u32::try_from(day).ok()?,
    )?;
    if year < 1 {
        return None;
    }
    let mut ticks = date_ticks(date);
    let mut i = 10;
    let mut utc = false;
    match b.get(i) {
        None => return Some(Parsed { ticks, utc }),
        Some(b'Z') if b.len() == i + 1 => return Some(Parsed { ticks, utc: true }),
        Some(b'T' | b' ') => {}
        _ => return None,
    }
    let (hour, minute, second) = (num(i + 1, 2)?, num(i + 4, 2)?, num(i + 7, 2)?);
    if b.get(i + 3) != Some(&b':')
        || b.get(i + 6) != Some(&b':')
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    ticks += hour * TICKS_PER_HOUR + minute * TICKS_PER_MINUTE + second * TICKS_PER_SECOND;
    i += 9;
    if b.get(i) == Some(&b'.') {
        let digits = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        if !(1..=7).contains(&digits) {
            return None;
        }
        let fraction = num(i + 1, digits)?;
        ticks += fraction * 10i64.pow(7 - digits as u32);
        i += 1 + digits;
    }
    match &b[i..] {
        b"" => {}
        b"Z" => utc = true,
        _ => return None,
    }
    Some(Parsed { ticks, utc })
}

fn ticks_arg(v: &Val) -> Option<i64> {
    parse_date_time(v.as_str()?).map(|p| p.ticks)
}

/// A number that is an exact integer within `i64` ("isn't a valid integer" gives undefined).
fn int_arg(v: &Val) -> Option<i64> {
    let n = v.as_f64()?;
    (n.is_finite() && n.fract() == 0.0 && n.abs() < 9.2e18).then_some(n as i64)
}

fn now_ticks(ctx: &FnContext) -> Option<i64> {
    ctx.now_ticks
        .checked_add(UNIX_EPOCH_TICKS)
        .and_then(in_range)
}

fn add_months(ticks: i64, months: i64) -> Option<i64> {
    let c = civil(ticks)?;
    let index = i64::from(c.date.year()) * 12 + i64::from(c.date.month0()) + months;
    let (year, month0) = (index.div_euclid(12), index.rem_euclid(12));
    if !(1..=9999).contains(&year) {
        return None;
    }
    let year = i32::try_from(year).ok()?;
    let month = u32::try_from(month0).ok()? + 1;
    // Like .NET's AddMonths: the day is clamped to the end of a shorter month.
    let last_day = (28..=31)
        .rev()
        .find(|&d| NaiveDate::from_ymd_opt(year, month, d).is_some())?;
    let date = NaiveDate::from_ymd_opt(year, month, c.date.day().min(last_day))?;
    in_range(date_ticks(date) + ticks % TICKS_PER_DAY)
}

fn add(ticks: i64, part: Part, n: i64) -> Option<i64> {
    let delta = match part {
        Part::Year => return add_months(ticks, n.checked_mul(12)?),
        Part::Month => return add_months(ticks, n),
        Part::Day => n.checked_mul(TICKS_PER_DAY)?,
        Part::Hour => n.checked_mul(TICKS_PER_HOUR)?,
        Part::Minute => n.checked_mul(TICKS_PER_MINUTE)?,
        Part::Second => n.checked_mul(TICKS_PER_SECOND)?,
        Part::Millisecond => n.checked_mul(TICKS_PER_MILLISECOND)?,
        Part::Microsecond => n.checked_mul(TICKS_PER_MICROSECOND)?,
        // Below the 100 ns resolution: whole ticks only, truncated toward zero (undocumented).
        Part::Nanosecond => n / 100,
    };
    in_range(ticks.checked_add(delta)?)
}

fn part_of(ticks: i64, part: Part) -> Option<i64> {
    let c = civil(ticks)?;
    Some(match part {
        Part::Year => i64::from(c.date.year()),
        Part::Month => i64::from(c.date.month()),
        Part::Day => i64::from(c.date.day()),
        Part::Hour => c.hour,
        Part::Minute => c.minute,
        Part::Second => c.second,
        // The sub-second parts are the whole fraction in that unit, truncated: the example
        // gives 130 / 130161 / 130161700 for ".1301617".
        Part::Millisecond => c.fraction / TICKS_PER_MILLISECOND,
        Part::Microsecond => c.fraction / TICKS_PER_MICROSECOND,
        Part::Nanosecond => c.fraction * 100,
    })
}

// ---------------------------------------------------------------------------------------------
// GetCurrent*

/// Now for the plain `GetCurrent*`: the clock at this call.
fn live(ctx: &FnContext) -> i64 {
    ctx.clock.map_or(ctx.now_ticks, |read| read())
}

fn date_time_at(unix_ticks: i64) -> Val {
    iso_val(unix_ticks.checked_add(UNIX_EPOCH_TICKS).and_then(in_range))
}

fn ticks_at(unix_ticks: i64) -> Val {
    match unix_ticks.checked_add(UNIX_EPOCH_TICKS).and_then(in_range) {
        Some(_) => Val::Num(unix_ticks as f64),
        None => Val::Undefined,
    }
}

fn timestamp_at(unix_ticks: i64) -> Val {
    Val::Num(unix_ticks.div_euclid(TICKS_PER_MILLISECOND) as f64)
}

fn get_current_date_time(_: &[Val], ctx: &FnContext) -> Val {
    date_time_at(live(ctx))
}

fn get_current_date_time_static(_: &[Val], ctx: &FnContext) -> Val {
    date_time_at(ctx.now_ticks)
}

fn get_current_ticks(_: &[Val], ctx: &FnContext) -> Val {
    ticks_at(live(ctx))
}

fn get_current_ticks_static(_: &[Val], ctx: &FnContext) -> Val {
    ticks_at(ctx.now_ticks)
}

fn get_current_timestamp(_: &[Val], ctx: &FnContext) -> Val {
    timestamp_at(live(ctx))
}

fn get_current_timestamp_static(_: &[Val], ctx: &FnContext) -> Val {
    timestamp_at(ctx.now_ticks)
}

fn ago(args: &[Val], ctx: &FnContext) -> Val {
    let step = || {
        let part = Part::parse(args.first()?)?;
        let n = int_arg(args.get(1)?)?;
        add(now_ticks(ctx)?, part, n.checked_neg()?)
    };
    iso_val(step())
}

fn now(args: &[Val], ctx: &FnContext) -> Val {
    let step = || match args {
        [] => now_ticks(ctx),
        [part, n] => add(now_ticks(ctx)?, Part::parse(part)?, int_arg(n)?),
        // The page documents NOW() and NOW(part, n) only.
        _ => None,
    };
    iso_val(step())
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

fn date_time_add(args: &[Val], _: &FnContext) -> Val {
    let step = || {
        let part = Part::parse(args.first()?)?;
        let n = int_arg(args.get(1)?)?;
        add(ticks_arg(args.get(2)?)?, part, n)
    };
    iso_val(step())
}

fn date_time_bin(args: &[Val], _: &FnContext) -> Val {
    let step = || {
        let ticks = ticks_arg(args.first()?)?;
        // Years and months have no fixed length: "minimum granularity ... is days".
        let unit = Part::parse(args.get(1)?)?.fixed_nanos()?;
        let size = match args.get(2) {
            None => 1,
            Some(v) => int_arg(v).filter(|&n| n > 0)?,
        };
        let origin = match args.get(3) {
            None => UNIX_EPOCH_TICKS,
            Some(v) => ticks_arg(v).filter(|&t| t >= WINDOWS_EPOCH_TICKS)?,
        };
        // Nanoseconds in i128 so sub-tick bins and huge sizes cannot overflow; a date before the
        // origin falls into the bin that starts at or before it (floor division).
        let width = i128::from(size).checked_mul(unit)?;
        let offset = (i128::from(ticks) - i128::from(origin)) * 100;
        let start = i128::from(origin) * 100 + offset.div_euclid(width) * width;
        in_range(i64::try_from(start.div_euclid(100)).ok()?)
    };
    iso_val(step())
}

/// Number of `part` boundaries crossed going from `start` to `end` (T-SQL DATEDIFF semantics,
/// as the page's remark says), not the elapsed interval measured in that unit.
fn boundaries(part: Part, start: i64, end: i64) -> Option<i128> {
    let (s, e) = (civil(start)?, civil(end)?);
    let months = |c: &Civil| i128::from(c.date.year()) * 12 + i128::from(c.date.month0());
    let (start, end) = (i128::from(start), i128::from(end));
    Some(match part {
        Part::Year => i128::from(e.date.year() - s.date.year()),
        Part::Month => months(&e) - months(&s),
        // Wider than i64 across the whole calendar; the result is a double anyway.
        Part::Nanosecond => (end - start) * 100,
        _ => {
            let unit = match part {
                Part::Day => TICKS_PER_DAY,
                Part::Hour => TICKS_PER_HOUR,
                Part::Minute => TICKS_PER_MINUTE,
                Part::Second => TICKS_PER_SECOND,
                Part::Millisecond => TICKS_PER_MILLISECOND,
                _ => TICKS_PER_MICROSECOND,
            };
            let unit = i128::from(unit);
            // Ticks are non-negative here, so integer division is the floor.
            end / unit - start / unit
        }
    })
}

fn date_time_diff(args: &[Val], _: &FnContext) -> Val {
    // The page's table lists day..nanosecond, but its own example diffs "yyyy" and "mm", so
    // every part is accepted.
    let step = || {
        let part = Part::parse(args.first()?)?;
        boundaries(part, ticks_arg(args.get(1)?)?, ticks_arg(args.get(2)?)?)
    };
    step().map(|n| Val::Num(n as f64)).unwrap_or_default()
}

fn date_time_from_parts(args: &[Val], _: &FnContext) -> Val {
    let step = || {
        let mut parts = [0i64; 7];
        for (slot, v) in parts.iter_mut().zip(args) {
            *slot = int_arg(v)?;
        }
        let [year, month, day, hour, minute, second, fraction] = parts;
        if !(1..=9999).contains(&year)
            || !(0..24).contains(&hour)
            || !(0..60).contains(&minute)
            || !(0..60).contains(&second)
            || !(0..TICKS_PER_SECOND).contains(&fraction)
        {
            return None;
        }
        let date = NaiveDate::from_ymd_opt(
            i32::try_from(year).ok()?,
            u32::try_from(month).ok()?,
            u32::try_from(day).ok()?,
        )?;
        // The seventh argument is the fraction in 100 ns units (3456789 → .3456789).
        Some(
            date_ticks(date)
                + hour * TICKS_PER_HOUR
                + minute * TICKS_PER_MINUTE
                + second * TICKS_PER_SECOND
                + fraction,
        )
    };
    iso_val(step())
}

// ---------------------------------------------------------------------------------------------
// Parts and conversions

fn part_val(part: Option<Part>, v: Option<&Val>) -> Val {
    part.zip(v.and_then(ticks_arg))
        .and_then(|(p, t)| part_of(t, p))
        .map(|n| Val::Num(n as f64))
        .unwrap_or_default()
}

fn date_time_part(args: &[Val], _: &FnContext) -> Val {
    part_val(args.first().and_then(Part::parse), args.get(1))
}

fn day(args: &[Val], _: &FnContext) -> Val {
    part_val(Some(Part::Day), args.first())
}

fn month(args: &[Val], _: &FnContext) -> Val {
    part_val(Some(Part::Month), args.first())
}

fn year(args: &[Val], _: &FnContext) -> Val {
    part_val(Some(Part::Year), args.first())
}

fn date_time_to_ticks(args: &[Val], _: &FnContext) -> Val {
    args.first()
        .and_then(ticks_arg)
        .map(|t| Val::Num((t - UNIX_EPOCH_TICKS) as f64))
        .unwrap_or_default()
}

fn date_time_to_timestamp(args: &[Val], _: &FnContext) -> Val {
    // Sub-millisecond remainders are dropped toward zero, as .NET integer division does
    // (undocumented).
    args.first()
        .and_then(ticks_arg)
        .map(|t| Val::Num(((t - UNIX_EPOCH_TICKS) / TICKS_PER_MILLISECOND) as f64))
        .unwrap_or_default()
}

/// A finite number truncated toward zero to an `i64` (a double cast to a 64-bit count, as the
/// service's conversions presumably do; the pages only say invalid values give undefined).
fn whole(v: &Val) -> Option<i64> {
    let n = v.as_f64()?;
    (n.is_finite() && n.abs() < 9.2e18).then_some(n.trunc() as i64)
}

fn ticks_to_date_time(args: &[Val], _: &FnContext) -> Val {
    iso_val(
        args.first()
            .and_then(whole)
            .and_then(|n| n.checked_add(UNIX_EPOCH_TICKS)),
    )
}

fn timestamp_to_date_time(args: &[Val], _: &FnContext) -> Val {
    let step = || {
        whole(args.first()?)?
            .checked_mul(TICKS_PER_MILLISECOND)?
            .checked_add(UNIX_EPOCH_TICKS)
    };
    iso_val(step())
}

// ---------------------------------------------------------------------------------------------
// DateTimeFormat

fn date_time_format(args: &[Val], _: &FnContext) -> Val {
    let step = || {
        let parsed = parse_date_time(args.first()?.as_str()?)?;
        format_net(parsed, args.get(1)?.as_str()?)
    };
    step().map(Val::str).unwrap_or_default()
}

/// .NET invariant-culture patterns of the one-character standard format strings. The page
/// only shows custom patterns; a format string of one character is a standard format in .NET,
/// whose DateTime formatting the page's examples follow (`FFF`, `\` escapes).
fn standard_pattern(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "MM/dd/yyyy",
        'D' => "dddd, dd MMMM yyyy",
        'f' => "dddd, dd MMMM yyyy HH:mm",
        'F' | 'U' => "dddd, dd MMMM yyyy HH:mm:ss",
        'g' => "MM/dd/yyyy HH:mm",
        'G' => "MM/dd/yyyy HH:mm:ss",
        'M' | 'm' => "MMMM dd",
        'O' | 'o' => "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
        'R' | 'r' => "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'",
        's' => "yyyy'-'MM'-'dd'T'HH':'mm':'ss",
        't' => "HH:mm",
        'T' => "HH:mm:ss",
        'u' => "yyyy'-'MM'-'dd HH':'mm':'ss'Z'",
        'Y' | 'y' => "yyyy MMMM",
        _ => return None,
    })
}

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn day_name(w: Weekday) -> &'static str {
    match w {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

/// Formats with a .NET custom date and time format string (invariant culture). Returns `None`
/// where .NET throws a FormatException (unknown standard format, over-long fraction specifier,
/// unterminated quote, trailing escape). One loop over the format's characters with one arm
/// per specifier family, as .NET's formatter reads it; the arms share the cursor and lookahead.
fn format_net(p: Parsed, fmt: &str) -> Option<String> {
    let mut chars: Vec<char> = fmt.chars().collect();
    if chars.is_empty() {
        chars = "MM/dd/yyyy HH:mm:ss".chars().collect();
    } else if let [c] = chars[..] {
        chars = standard_pattern(c)?.chars().collect();
    }
    let c = civil(p.ticks)?;
    let year = i64::from(c.date.year());
    let month = c.date.month() as usize;
    let digits = format!("{:07}", c.fraction);
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == ch).count();
        let mut used = run;
        match ch {
            'd' => match run {
                1 => out.push_str(&c.date.day().to_string()),
                2 => out.push_str(&format!("{:02}", c.date.day())),
                3 => out.push_str(&day_name(c.date.weekday())[..3]),
                _ => out.push_str(day_name(c.date.weekday())),
            },
            'f' | 'F' => {
                if run > 7 {
                    return None;
                }
                let shown = &digits[..run];
                if ch == 'f' {
                    out.push_str(shown);
                } else {
                    out.push_str(shown.trim_end_matches('0'));
                }
            }
            'g' => out.push_str("A.D."),
            'h' => {
                let h12 = if c.hour % 12 == 0 { 12 } else { c.hour % 12 };
                out.push_str(&pad(h12, run.min(2)));
            }
            'H' => out.push_str(&pad(c.hour, run.min(2))),
            'm' => out.push_str(&pad(c.minute, run.min(2))),
            's' => out.push_str(&pad(c.second, run.min(2))),
            'M' => match run {
                1 | 2 => out.push_str(&pad(month as i64, run)),
                3 => out.push_str(&MONTH_NAMES[month - 1][..3]),
                _ => out.push_str(MONTH_NAMES[month - 1]),
            },
            't' => {
                let designator = if c.hour < 12 { "AM" } else { "PM" };
                out.push_str(if run == 1 {
                    &designator[..1]
                } else {
                    designator
                });
            }
            'y' => match run {
                1 => out.push_str(&(year % 100).to_string()),
                2 => out.push_str(&format!("{:02}", year % 100)),
                n => out.push_str(&pad(year, n)),
            },
            // Instants here are UTC (or unspecified, without the `Z`), so the offset is zero.
            'K' => {
                if p.utc {
                    out.push('Z');
                }
                used = 1;
            }
            'z' => out.push_str(match run {
                1 => "+0",
                2 => "+00",
                _ => "+00:00",
            }),
            '\'' | '"' => {
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => return None,
                        Some(&q) if q == ch => break,
                        Some('\\') => {
                            out.push(*chars.get(j + 1)?);
                            j += 2;
                        }
                        Some(&other) => {
                            out.push(other);
                            j += 1;
                        }
                    }
                }
                used = j + 1 - i;
            }
            '\\' => {
                out.push(*chars.get(i + 1)?);
                used = 2;
            }
            // `%d` is the single-letter custom specifier `d`: drop the marker.
            '%' => used = 1,
            other => {
                out.push(other);
                used = 1;
            }
        }
        i += used;
    }
    Some(out)
}

fn pad(n: i64, width: usize) -> String {
    format!("{n:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: FnContext = FnContext {
        clock: None,
        now_ticks: 0,
        seed: 0,
    };

    fn s(x: &str) -> Val {
        Val::str(x)
    }

    fn n(x: f64) -> Val {
        Val::Num(x)
    }

    fn call(f: fn(&[Val], &FnContext) -> Val, args: &[Val]) -> Val {
        f(args, &CTX)
    }

    fn text(v: Val) -> String {
        match v {
            Val::Str(s) => s.to_string(),
            other => panic!("expected a string, got {other:?}"),
        }
    }

    fn num(v: Val) -> f64 {
        match v {
            Val::Num(n) => n,
            other => panic!("expected a number, got {other:?}"),
        }
    }

    /// 2024-10-14T14:20:30.666Z, near the AGO/NOW pages' assumed current time (the context
    /// only carries milliseconds).
    fn ctx_2024() -> FnContext {
        FnContext {
            clock: None,
            now_ticks: 17_289_156_306_660_000,
            seed: 0,
        }
    }

    #[test]
    fn constants_match_the_calendar() {
        assert_eq!(format_iso(0).unwrap(), "0001-01-01T00:00:00.0000000Z");
        assert_eq!(
            format_iso(UNIX_EPOCH_TICKS).unwrap(),
            "1970-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            format_iso(WINDOWS_EPOCH_TICKS).unwrap(),
            "1601-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            format_iso(MAX_TICKS).unwrap(),
            "9999-12-31T23:59:59.9999999Z"
        );
        assert!(format_iso(MAX_TICKS + 1).is_none());
        assert!(format_iso(-1).is_none());
    }

    #[test]
    fn date_time_add_docs_example() {
        let base = "2020-07-03T00:00:00.0000000";
        let cases = [
            ("yyyy", 1.0, "2021-07-03T00:00:00.0000000Z"),
            ("mm", 1.0, "2020-08-03T00:00:00.0000000Z"),
            ("dd", 1.0, "2020-07-04T00:00:00.0000000Z"),
            ("hh", 1.0, "2020-07-03T01:00:00.0000000Z"),
            ("yyyy", -1.0, "2019-07-03T00:00:00.0000000Z"),
            ("mm", -1.0, "2020-06-03T00:00:00.0000000Z"),
            ("dd", -1.0, "2020-07-02T00:00:00.0000000Z"),
            ("hh", -1.0, "2020-07-02T23:00:00.0000000Z"),
            ("ss", 5.0 * -5.0, "2020-07-02T23:59:35.0000000Z"),
        ];
        for (part, k, want) in cases {
            assert_eq!(
                text(call(date_time_add, &[s(part), n(k), s(base)])),
                want,
                "{part} {k}"
            );
        }
    }

    #[test]
    fn date_time_add_other_parts_and_edges() {
        let base = s("2020-01-31T10:20:30.1234567Z");
        let add = |part: &str, k: f64| call(date_time_add, &[s(part), n(k), base.clone()]);
        assert_eq!(text(add("month", 1.0)), "2020-02-29T10:20:30.1234567Z");
        assert_eq!(text(add("m", 13.0)), "2021-02-28T10:20:30.1234567Z");
        assert_eq!(text(add("year", 1.0)), "2021-01-31T10:20:30.1234567Z");
        assert_eq!(text(add("d", 1.0)), "2020-02-01T10:20:30.1234567Z");
        assert_eq!(text(add("minute", 40.0)), "2020-01-31T11:00:30.1234567Z");
        assert_eq!(text(add("n", -21.0)), "2020-01-31T09:59:30.1234567Z");
        assert_eq!(text(add("s", 30.0)), "2020-01-31T10:21:00.1234567Z");
        assert_eq!(text(add("ms", 877.0)), "2020-01-31T10:20:31.0004567Z");
        assert_eq!(text(add("mcs", 1.0)), "2020-01-31T10:20:30.1234577Z");
        assert_eq!(text(add("ns", 300.0)), "2020-01-31T10:20:30.1234570Z");
        assert_eq!(text(add("ns", 99.0)), "2020-01-31T10:20:30.1234567Z");
        assert_eq!(text(add("YYYY", 1.0)), "2021-01-31T10:20:30.1234567Z");
        // Invalid part, non-integer amount, invalid date, out-of-range result.
        assert!(add("week", 1.0).is_undefined());
        assert!(add("dd", 1.5).is_undefined());
        assert!(call(date_time_add, &[s("dd"), s("1"), base.clone()]).is_undefined());
        assert!(call(date_time_add, &[s("dd"), n(1.0), s("2020-02-30T00:00:00Z")]).is_undefined());
        assert!(call(date_time_add, &[s("dd"), n(1.0), s("July 3rd")]).is_undefined());
        assert!(
            call(
                date_time_add,
                &[s("yyyy"), n(1.0), s("9999-06-01T00:00:00Z")]
            )
            .is_undefined()
        );
        assert!(
            call(
                date_time_add,
                &[s("dd"), n(-1.0), s("0001-01-01T00:00:00Z")]
            )
            .is_undefined()
        );
        assert!(add("ss", 1e300).is_undefined());
        assert!(call(date_time_add, &[s("dd"), n(1.0), Val::Undefined]).is_undefined());
    }

    #[test]
    fn input_forms() {
        let t = |x: &str| parse_date_time(x).map(|p| format_iso(p.ticks).unwrap());
        assert_eq!(
            t("2020-07-03T00:00:00.0000000Z").unwrap(),
            "2020-07-03T00:00:00.0000000Z"
        );
        assert_eq!(
            t("2020-07-03T00:00:00.0000000").unwrap(),
            "2020-07-03T00:00:00.0000000Z"
        );
        assert_eq!(
            t("2020-07-03T01:02:03.5Z").unwrap(),
            "2020-07-03T01:02:03.5000000Z"
        );
        assert_eq!(
            t("2020-07-03T01:02:03").unwrap(),
            "2020-07-03T01:02:03.0000000Z"
        );
        assert_eq!(t("2020-07-03").unwrap(), "2020-07-03T00:00:00.0000000Z");
        // is-datetime.md's forms: a date with `Z`, a space before the time.
        assert_eq!(t("2020-07-03Z").unwrap(), "2020-07-03T00:00:00.0000000Z");
        assert_eq!(
            t("2024-10-10 14:40:20").unwrap(),
            "2024-10-10T14:40:20.0000000Z"
        );
        for bad in [
            "",
            "2020",
            "2020-7-03",
            "2020-07-03T",
            "2020-07-03T01",
            "2020-07-03T24:00:00",
            "2020-07-03T00:60:00",
            "2020-07-03T00:00:60",
            "2020-02-30T00:00:00",
            "0000-01-01T00:00:00",
            "2020-07-03T00:00:00.",
            "2020-07-03T00:00:00.12345678",
            "2020-07-03T00:00:00+01:00",
            "2020-07-03T00:00:00z",
            "2020-07-03T01:02Z",
            "2020-07-03T01:02",
            "2020-07-03ZZ",
            " 2020-07-03",
        ] {
            assert!(t(bad).is_none(), "{bad:?} should not parse");
        }
        // What IS_DATETIME accepts, every date function reads.
        assert_eq!(
            call(date_time_part, &[s("hh"), s("2024-12-12 20:21:25")]),
            n(20.0)
        );
        assert_eq!(
            call(date_time_to_ticks, &[s("2024-12-12Z")]),
            call(date_time_to_ticks, &[s("2024-12-12T00:00:00Z")])
        );
        assert!(call(date_time_part, &[s("hh"), s("2016-05-29T08:30Z")]).is_undefined());
    }

    #[test]
    fn date_time_bin_docs_example() {
        let d = s("2021-01-08T18:35:00.0000000");
        let bin = |args: &[Val]| text(call(date_time_bin, args));
        assert_eq!(bin(&[d.clone(), s("dd")]), "2021-01-08T00:00:00.0000000Z");
        assert_eq!(bin(&[d.clone(), s("hh")]), "2021-01-08T18:00:00.0000000Z");
        assert_eq!(bin(&[d.clone(), s("ss")]), "2021-01-08T18:35:00.0000000Z");
        assert_eq!(
            bin(&[d.clone(), s("hh"), n(5.0)]),
            "2021-01-08T15:00:00.0000000Z"
        );
        assert_eq!(
            bin(&[d.clone(), s("dd"), n(7.0)]),
            "2021-01-07T00:00:00.0000000Z"
        );
        assert_eq!(
            bin(&[d.clone(), s("dd"), n(7.0), s("1601-01-01T00:00:00.0000000")]),
            "2021-01-04T00:00:00.0000000Z"
        );
    }

    #[test]
    fn date_time_bin_edges() {
        let d = s("2021-01-08T18:35:42.1234567Z");
        let bin = |args: &[Val]| call(date_time_bin, args);
        assert_eq!(
            text(bin(&[d.clone(), s("ms")])),
            "2021-01-08T18:35:42.1230000Z"
        );
        assert_eq!(
            text(bin(&[d.clone(), s("mcs"), n(100.0)])),
            "2021-01-08T18:35:42.1234000Z"
        );
        assert_eq!(
            text(bin(&[d.clone(), s("ns"), n(1.0)])),
            "2021-01-08T18:35:42.1234567Z"
        );
        assert_eq!(
            text(bin(&[d.clone(), s("ns"), n(1000.0)])),
            "2021-01-08T18:35:42.1234560Z"
        );
        assert_eq!(
            text(bin(&[d.clone(), s("mi"), n(15.0)])),
            "2021-01-08T18:30:00.0000000Z"
        );
        // A date before the origin falls into the bin that starts at or before it.
        assert_eq!(
            text(bin(&[s("1969-12-31T23:00:00Z"), s("dd"), n(2.0)])),
            "1969-12-30T00:00:00.0000000Z"
        );
        assert_eq!(
            text(bin(&[
                d.clone(),
                s("hh"),
                n(1.0),
                s("2021-01-08T00:30:00Z")
            ])),
            "2021-01-08T18:30:00.0000000Z"
        );
        // Year/month are not binnable; bin size must be a positive integer; origin >= 1601.
        assert!(bin(&[d.clone(), s("yyyy")]).is_undefined());
        assert!(bin(&[d.clone(), s("mm")]).is_undefined());
        assert!(bin(&[d.clone(), s("dd"), n(0.0)]).is_undefined());
        assert!(bin(&[d.clone(), s("dd"), n(-1.0)]).is_undefined());
        assert!(bin(&[d.clone(), s("dd"), n(1.5)]).is_undefined());
        assert!(bin(&[d.clone(), s("dd"), n(1.0), s("1600-12-31T00:00:00Z")]).is_undefined());
        assert!(bin(&[d.clone(), s("dd"), n(1.0), s("nope")]).is_undefined());
        assert!(bin(&[s("2021-01-08"), s("xx")]).is_undefined());
        assert!(bin(&[n(1.0), s("dd")]).is_undefined());
    }

    #[test]
    fn date_time_diff_docs_example() {
        let (a, b) = (
            s("2019-02-04T16:00:00.0000000"),
            s("2018-03-05T05:00:00.0000000"),
        );
        let diff =
            |part: &str, x: &Val, y: &Val| call(date_time_diff, &[s(part), x.clone(), y.clone()]);
        assert_eq!(num(diff("yyyy", &a, &b)), -1.0);
        assert_eq!(num(diff("mm", &a, &b)), -11.0);
        assert_eq!(num(diff("dd", &a, &b)), -336.0);
        assert!(diff("diffDays", &a, &b).is_undefined());
        assert_eq!(num(diff("hh", &a, &b)), -8075.0);
        assert_eq!(num(diff("ss", &a, &b)), -29_070_000.0);
        assert_eq!(num(diff("yyyy", &b, &a)), 1.0);
        assert_eq!(num(diff("mm", &b, &a)), 11.0);
        assert_eq!(num(diff("dd", &b, &a)), 336.0);
        assert_eq!(num(diff("hh", &b, &a)), 8075.0);
        assert_eq!(num(diff("ss", &b, &a)), 29_070_000.0);
    }

    #[test]
    fn date_time_diff_counts_boundaries() {
        let diff = |part: &str, x: &str, y: &str| num(call(date_time_diff, &[s(part), s(x), s(y)]));
        // One tick apart across midnight of New Year's Eve crosses every boundary once.
        let (x, y) = (
            "2020-12-31T23:59:59.9999999Z",
            "2021-01-01T00:00:00.0000000Z",
        );
        for part in [
            "year", "month", "day", "hour", "minute", "second", "ms", "mcs",
        ] {
            assert_eq!(diff(part, x, y), 1.0, "{part}");
        }
        assert_eq!(diff("ns", x, y), 100.0);
        // Across the whole calendar the nanosecond count exceeds i64.
        let span = diff("ns", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.9999999Z");
        assert_eq!(span, (MAX_TICKS as f64) * 100.0);
        // Nearly a year apart within one calendar year crosses none.
        assert_eq!(
            diff("yyyy", "2021-01-01T00:00:00Z", "2021-12-31T23:59:59Z"),
            0.0
        );
        assert_eq!(
            diff("dd", "2021-01-01T00:00:00Z", "2021-01-01T23:59:59Z"),
            0.0
        );
        assert_eq!(
            diff(
                "mcs",
                "2021-01-01T00:00:00.0000009Z",
                "2021-01-01T00:00:00.0000011Z"
            ),
            1.0
        );
        assert!(call(date_time_diff, &[s("dd"), s("2021-01-01"), s("bad")]).is_undefined());
    }

    #[test]
    fn date_time_from_parts_docs_example() {
        let fp = |parts: &[f64]| {
            call(
                date_time_from_parts,
                &parts.iter().map(|&x| n(x)).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            text(fp(&[2017.0, 4.0, 20.0])),
            "2017-04-20T00:00:00.0000000Z"
        );
        assert_eq!(
            text(fp(&[2017.0, 4.0, 20.0, 0.0, 0.0, 0.0, 0.0])),
            "2017-04-20T00:00:00.0000000Z"
        );
        assert_eq!(
            text(fp(&[2017.0, 4.0, 20.0, 13.0, 15.0, 20.0, 3_456_789.0])),
            "2017-04-20T13:15:20.3456789Z"
        );
        assert_eq!(
            text(fp(&[2017.0, 4.0, 20.0, 13.0, 15.0])),
            "2017-04-20T13:15:00.0000000Z"
        );
        assert!(fp(&[-2000.0, -1.0, -1.0]).is_undefined());
        assert!(fp(&[2017.0, 2.0, 29.0]).is_undefined());
        assert!(fp(&[2017.0, 4.0, 20.0, 24.0]).is_undefined());
        assert!(fp(&[2017.0, 4.0, 20.0, 0.0, 60.0]).is_undefined());
        assert!(fp(&[2017.0, 4.0, 20.0, 0.0, 0.0, 60.0]).is_undefined());
        assert!(fp(&[2017.0, 4.0, 20.0, 0.0, 0.0, 0.0, 10_000_000.0]).is_undefined());
        assert!(fp(&[2017.5, 4.0, 20.0]).is_undefined());
        assert!(fp(&[10_000.0, 1.0, 1.0]).is_undefined());
        assert!(call(date_time_from_parts, &[n(2017.0), s("4"), n(20.0)]).is_undefined());
    }

    #[test]
    fn date_time_part_docs_example() {
        let d = s("2016-05-29T08:30:00.1301617");
        let part = |p: &str| num(call(date_time_part, &[s(p), d.clone()]));
        assert_eq!(part("yyyy"), 2016.0);
        assert_eq!(part("mm"), 5.0);
        assert_eq!(part("dd"), 29.0);
        assert_eq!(part("hh"), 8.0);
        assert_eq!(part("mi"), 30.0);
        assert_eq!(part("ss"), 0.0);
        assert_eq!(part("ms"), 130.0);
        assert_eq!(part("mcs"), 130_161.0);
        assert_eq!(part("ns"), 130_161_700.0);
        // The 2020 announcement's example: DateTimePart("m", ...) is the month.
        assert_eq!(
            num(call(
                date_time_part,
                &[s("m"), s("2020-01-02T03:04:05.6789123Z")]
            )),
            1.0
        );
        assert!(call(date_time_part, &[s("week"), d.clone()]).is_undefined());
        assert!(call(date_time_part, &[s("dd"), s("2016-13-01")]).is_undefined());
    }

    #[test]
    fn day_month_year_docs_examples() {
        let one = |f: fn(&[Val], &FnContext) -> Val, x: &str| num(call(f, &[s(x)]));
        assert_eq!(one(day, "2024-01-10"), 10.0);
        assert_eq!(one(day, "2000-12-12T10:00:00"), 12.0);
        assert_eq!(one(day, "1989-03-03T12:12:12.1234567Z"), 3.0);
        assert_eq!(one(month, "2024-01-10"), 1.0);
        assert_eq!(one(month, "2000-12-12T10:00:00"), 12.0);
        assert_eq!(one(month, "1989-03-03T12:12:12.1234567Z"), 3.0);
        assert_eq!(one(year, "2000-10-10"), 2000.0);
        assert_eq!(one(year, "2024-01-10T14:15:20"), 2024.0);
        assert_eq!(one(year, "1989-03-03T12:12:12.1234567Z"), 1989.0);
        assert!(call(day, &[s("not a date")]).is_undefined());
        assert!(call(year, &[n(2024.0)]).is_undefined());
    }

    #[test]
    fn conversions_docs_examples() {
        assert_eq!(
            num(call(
                date_time_to_ticks,
                &[s("2015-05-19T12:00:00.0000000")]
            )),
            14_320_368_000_000_000.0
        );
        assert_eq!(
            num(call(
                date_time_to_timestamp,
                &[s("2015-05-19T12:00:00.0000000")]
            )),
            1_432_036_800_000.0
        );
        assert_eq!(
            text(call(ticks_to_date_time, &[n(15_973_607_943_002_652.0)])),
            "2020-08-13T23:19:54.3002652Z"
        );
        assert_eq!(
            text(call(ticks_to_date_time, &[n(0.0)])),
            "1970-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            text(call(ticks_to_date_time, &[n(-116_444_736_000_000_000.0)])),
            "1601-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            text(call(timestamp_to_date_time, &[n(1_597_360_794_300.0)])),
            "2020-08-13T23:19:54.3000000Z"
        );
        assert_eq!(
            text(call(timestamp_to_date_time, &[n(0.0)])),
            "1970-01-01T00:00:00.0000000Z"
        );
        assert_eq!(
            text(call(timestamp_to_date_time, &[n(-11_644_473_600_000.0)])),
            "1601-01-01T00:00:00.0000000Z"
        );
    }

    #[test]
    fn conversions_edges() {
        assert_eq!(
            num(call(
                date_time_to_ticks,
                &[s("1969-12-31T23:59:59.9999999Z")]
            )),
            -1.0
        );
        assert_eq!(
            num(call(
                date_time_to_timestamp,
                &[s("1970-01-01T00:00:00.0009999Z")]
            )),
            0.0
        );
        assert_eq!(
            num(call(
                date_time_to_timestamp,
                &[s("1969-12-31T23:59:59.9995Z")]
            )),
            0.0
        );
        assert_eq!(
            text(call(timestamp_to_date_time, &[n(1.9)])),
            "1970-01-01T00:00:00.0010000Z"
        );
        assert!(call(ticks_to_date_time, &[n(1e300)]).is_undefined());
        assert!(call(ticks_to_date_time, &[n(f64::NAN)]).is_undefined());
        assert!(call(ticks_to_date_time, &[s("0")]).is_undefined());
        assert!(call(timestamp_to_date_time, &[s("0")]).is_undefined());
        assert!(call(timestamp_to_date_time, &[n(253_402_300_800_000.0)]).is_undefined());
        assert!(call(timestamp_to_date_time, &[n(-62_135_596_800_001.0)]).is_undefined());
        assert!(call(date_time_to_ticks, &[s("yesterday")]).is_undefined());
        assert!(call(date_time_to_timestamp, &[Val::Null]).is_undefined());
    }

    #[test]
    fn get_current_functions_read_the_query_start() {
        let ctx = FnContext {
            clock: None,
            now_ticks: 15_569_164_690_650_000,
            seed: 0,
        };
        assert_eq!(num(get_current_timestamp(&[], &ctx)), 1_556_916_469_065.0);
        assert_eq!(num(get_current_ticks(&[], &ctx)), 15_569_164_690_650_000.0);
        assert_eq!(
            text(get_current_date_time(&[], &ctx)),
            "2019-05-03T20:47:49.0650000Z"
        );
        // The ticks and the date string describe the same instant.
        let ticks = get_current_ticks(&[], &ctx);
        assert_eq!(
            call(ticks_to_date_time, &[ticks]).as_str(),
            get_current_date_time(&[], &ctx).as_str()
        );
        for name in [
            "GETCURRENTDATETIMESTATIC",
            "GETCURRENTTICKSSTATIC",
            "GETCURRENTTIMESTAMPSTATIC",
        ] {
            let spec = FUNCTIONS.iter().find(|f| f.name == name).unwrap();
            let plain = FUNCTIONS
                .iter()
                .find(|f| f.name == &name[..name.len() - 6])
                .unwrap();
            assert!(!spec.uses_index && !plain.uses_index);
            assert_eq!(
                format!("{:?}", (spec.eval)(&[], &ctx)),
                format!("{:?}", (plain.eval)(&[], &ctx))
            );
        }
    }

    #[test]
    fn plain_get_current_functions_read_the_clock_at_each_call() {
        static CALLS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
        // A millisecond per call: ticks this large are doubles with a spacing of 2.
        fn counting_clock() -> i64 {
            let calls = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            15_569_164_690_650_000 + (calls + 1) * TICKS_PER_MILLISECOND
        }
        let ctx = FnContext {
            clock: Some(counting_clock),
            now_ticks: 15_569_164_690_650_000,
            seed: 0,
        };
        let first = num(get_current_ticks(&[], &ctx));
        let second = num(get_current_ticks(&[], &ctx));
        assert!(second > first, "{first} then {second}");
        assert!(text(get_current_date_time(&[], &ctx)).as_str() > "2019-05-03T20:47:49.0650000Z");
        // The static twins keep the binding's value.
        assert_eq!(
            num(get_current_ticks_static(&[], &ctx)),
            15_569_164_690_650_000.0
        );
        assert_eq!(
            text(get_current_date_time_static(&[], &ctx)),
            "2019-05-03T20:47:49.0650000Z"
        );
        assert_eq!(
            num(get_current_timestamp_static(&[], &ctx)),
            1_556_916_469_065.0
        );
    }

    #[test]
    fn ago_and_now_docs_examples() {
        // The pages assume 2024-10-14T14:20:30.6668888Z; the context has millisecond precision.
        let ctx = ctx_2024();
        let ago = |part: &str, k: f64| text(ago(&[s(part), n(k)], &ctx));
        assert_eq!(ago("yyyy", 1.0), "2023-10-14T14:20:30.6660000Z");
        assert_eq!(ago("yyyy", -1.0), "2025-10-14T14:20:30.6660000Z");
        assert_eq!(ago("ss", 30.0), "2024-10-14T14:20:00.6660000Z");
        assert_eq!(ago("ms", 4.0), "2024-10-14T14:20:30.6620000Z");
        let now_with = |args: &[Val]| now(args, &ctx);
        assert_eq!(text(now_with(&[])), "2024-10-14T14:20:30.6660000Z");
        assert_eq!(
            text(now_with(&[s("yyyy"), n(1.0)])),
            "2025-10-14T14:20:30.6660000Z"
        );
        assert_eq!(
            text(now_with(&[s("yyyy"), n(-1.0)])),
            "2023-10-14T14:20:30.6660000Z"
        );
        assert_eq!(
            text(now_with(&[s("ss"), n(30.0)])),
            "2024-10-14T14:21:00.6660000Z"
        );
        assert_eq!(
            text(now_with(&[s("ms"), n(4.0)])),
            "2024-10-14T14:20:30.6700000Z"
        );
        assert!(now_with(&[s("ms")]).is_undefined());
        assert!(now_with(&[s("week"), n(1.0)]).is_undefined());
        assert!(super::ago(&[s("dd"), n(0.5)], &ctx).is_undefined());
        assert!(super::ago(&[s("bogus"), n(1.0)], &ctx).is_undefined());
    }

    #[test]
    fn date_time_format_docs_example() {
        let d = s("2024-10-10 14:40:20");
        let fmt = |f: &str| text(call(date_time_format, &[d.clone(), s(f)]));
        assert_eq!(fmt("yyyyMMdd"), "20241010");
        assert_eq!(fmt("yyyy-MM-dd [HH:mm:ss]"), "2024-10-10 [14:40:20]");
        // The SQL literals "To\\da\\y i\\s: ..." reach the function with single backslashes.
        assert_eq!(
            fmt(r"To\da\y i\s: yyyy-MM-ddTHH:mm:ss.fff"),
            "Today is: 2024-10-10T14:40:20.000"
        );
        assert_eq!(
            fmt(r"To\da\y i\s: yyyy-MM-ddTHH:mm:ss.FFF"),
            "Today is: 2024-10-10T14:40:20."
        );
    }

    #[test]
    fn date_time_format_specifiers() {
        let d = s("2024-03-05T07:08:09.1200000Z");
        let fmt = |f: &str| call(date_time_format, &[d.clone(), s(f)]);
        assert_eq!(text(fmt("d/M/yy h:m:s t")), "5/3/24 7:8:9 A");
        assert_eq!(
            text(fmt("ddd dddd MMM MMMM tt hh")),
            "Tue Tuesday Mar March AM 07"
        );
        assert_eq!(text(fmt("fffffff FFFFFFF FF F")), "1200000 12 12 1");
        assert_eq!(
            text(fmt("'yyyy' \"MM\" %d K z zz zzz g")),
            "yyyy MM 5 Z +0 +00 +00:00 A.D."
        );
        assert_eq!(text(fmt("yyyyy")), "02024");
        assert_eq!(text(fmt("o")), "2024-03-05T07:08:09.1200000Z");
        assert_eq!(text(fmt("s")), "2024-03-05T07:08:09");
        assert_eq!(text(fmt("u")), "2024-03-05 07:08:09Z");
        assert_eq!(text(fmt("R")), "Tue, 05 Mar 2024 07:08:09 GMT");
        assert_eq!(text(fmt("")), "03/05/2024 07:08:09");
        // Unknown standard format, too many fraction digits, unterminated quote, dangling escape.
        assert!(fmt("Q").is_undefined());
        assert!(fmt("ffffffff").is_undefined());
        assert!(fmt("'abc").is_undefined());
        assert!(fmt("abc\\").is_undefined());
        assert!(call(date_time_format, &[s("2024-13-01"), s("yyyy")]).is_undefined());
        assert!(call(date_time_format, &[d.clone(), n(1.0)]).is_undefined());
        // Without a `Z` the instant has no kind: `K` prints nothing.
        assert_eq!(
            text(call(date_time_format, &[s("2024-03-05"), s("HH:mmK")])),
            "00:00"
        );
    }

    #[test]
    fn registry_entries() {
        let names: Vec<_> = FUNCTIONS.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), 21);
        for f in FUNCTIONS {
            assert_eq!(f.kind, super::super::FnKind::Scalar);
            assert_eq!(f.name, f.name.to_uppercase());
        }
        let spec = |name: &str| FUNCTIONS.iter().find(|f| f.name == name).unwrap();
        assert_eq!(
            (spec("DATETIMEBIN").min_args, spec("DATETIMEBIN").max_args),
            (2, 4)
        );
        assert_eq!(
            (
                spec("DATETIMEFROMPARTS").min_args,
                spec("DATETIMEFROMPARTS").max_args
            ),
            (3, 7)
        );
        assert!(spec("DAY").uses_index && spec("MONTH").uses_index && spec("YEAR").uses_index);
        assert!(!spec("DATETIMEPART").uses_index);
    }
}
