//! `index.html` of a real CPU run, opened in headless Chromium: every section is there (results,
//! sweeps, the regression gate, the history's trends, per-case charts), nothing in the file asks
//! for anything outside it, the page loads without a console message or a network error, and a
//! screenshot shows that every chart drew (coloured marks inside its own area, not only a frame).
//!
//! Chromium is Debian's package (`.ci/run` installs it and sets `APEX_REQUIRE_CHROMIUM=1`); without
//! it the browser half is skipped with a message, unless that variable is set.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{apex, apex_bare, stderr};

/// The saxpy case and tile_ssm.forward's `steps` sweep (four points: one line of a sweep chart).
const FILTERS: [&str; 4] = [
    "--filter",
    "example.saxpy*",
    "--filter",
    "tile_ssm.forward/cpu/fp16/batch=1,channels=128,clamp_value=10000.0,init_state=none,nonfinite=false,*",
];

fn run(out: &Path, history: &Path, extra: &[&str]) {
    let mut args = vec![
        "run",
        "--backends",
        "cpu",
        "--quick",
        "--save-samples",
        "--output-dir",
        out.to_str().unwrap(),
        "--history",
        history.to_str().unwrap(),
    ];
    args.extend(FILTERS);
    args.extend(extra);
    let o = apex(&args);
    assert!(
        matches!(o.status.code(), Some(0 | 2)),
        "run failed: {}",
        stderr(&o)
    );
}

/// Two runs into one history folder, the second gated against a baseline emitted from the first.
fn two_runs(dir: &Path) -> PathBuf {
    let history = dir.join("history");
    let first = dir.join("first");
    run(&first, &history, &[]);
    let baseline = dir.join("baseline.json");
    let emit = apex_bare([
        "baseline",
        "emit",
        "--from",
        first.join("summary.json").to_str().unwrap(),
        "--output",
        baseline.to_str().unwrap(),
    ]);
    assert_eq!(emit.status.code(), Some(0), "{}", stderr(&emit));
    let second = dir.join("second");
    run(
        &second,
        &history,
        &["--compare", baseline.to_str().unwrap()],
    );
    second
}

/// Every `<svg …>…</svg>` element of the page, in order.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("a closed svg") + start + "</svg>".len();
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

/// The `width` and `height` attributes of an svg element.
fn size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let key = format!(" {name}=\"");
        let at = svg.find(&key).expect("a size attribute") + key.len();
        svg[at..at + svg[at..].find('"').unwrap()].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

#[test]
fn the_html_report_is_complete_self_contained_and_every_chart_draws_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let out = two_runs(dir.path());
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html written");
    let summary = support::read_json(&out.join("summary.json"));

    // Every section, and every measured case with its charts.
    for heading in [
        "id=\"results\"",
        "id=\"sweeps\"",
        "id=\"gate\"",
        "id=\"history\"",
        "id=\"cases\"",
        "tile_ssm.forward: p50 ms by steps",
        "iteration times, in the order taken",
        "sample distribution",
    ] {
        assert!(html.contains(heading), "index.html lacks {heading}");
    }
    let cases = summary["benchmarks"].as_object().unwrap();
    assert_eq!(cases.len(), 5, "saxpy and four tile_ssm steps");
    for id in cases.keys() {
        assert!(html.contains(id.as_str()), "{id} missing from index.html");
    }
    // nvbench's compare columns, one row per gated metric.
    for col in ["Ref Time", "Cmp Time", "Noise", "%Diff", "Status"] {
        assert!(html.contains(col), "{col}");
    }
    let gated = std::fs::read_to_string(out.join("compare_summary.json")).unwrap();
    let checks = serde_json::from_str::<serde_json::Value>(&gated).unwrap()["checks"]
        .as_array()
        .unwrap()
        .len();
    assert!(checks >= 10, "{checks} checks");

    // Nothing in the file asks for anything outside it.
    for needle in [
        "<script", "<link", "<img", "<iframe", "@import", "url(", "src=", "https://",
    ] {
        assert!(!html.contains(needle), "index.html contains `{needle}`");
    }
    let external_href = html
        .match_indices("href=\"")
        .any(|(i, m)| !html[i + m.len()..].starts_with('#'));
    assert!(!external_href, "every link is to an anchor in the page");
    let http_refs: Vec<&str> = html
        .match_indices("http://")
        .map(|(i, _)| &html[i..(i + 40).min(html.len())])
        .filter(|s| !s.starts_with("http://www.w3.org/2000/svg"))
        .collect();
    assert!(http_refs.is_empty(), "{http_refs:?}");

    let charts = svgs(&html);
    // Two sweep charts, the history's trends, and two charts per case.
    assert!(
        charts.len() >= 2 + 2 * cases.len(),
        "{} charts",
        charts.len()
    );
    check_in_chromium(&out.join("index.html"), dir.path());
}

/// The browser half for any report: `APEX_HTML_REPORT=path/to/index.html cargo test -p apex-host
/// --test html_report -- --ignored` (how the H100 run's report is checked on this machine).
#[test]
#[ignore = "checks the report named by APEX_HTML_REPORT"]
fn a_given_report_opens_in_chromium_and_every_chart_draws() {
    let path = PathBuf::from(std::env::var_os("APEX_HTML_REPORT").expect("set APEX_HTML_REPORT"));
    let html = std::fs::read_to_string(&path).expect("the report is readable");
    assert!(!svgs(&html).is_empty(), "the report has charts");
    let tmp = tempfile::tempdir().unwrap();
    check_in_chromium(&path, tmp.path());
}

/// Opens `page` in Chromium: no console message, no network error, the page drew, and every
/// chart drew (all charts stacked at known offsets in one page, one screenshot, coloured marks
/// counted inside each chart's own area). Skipped (with a note) without Chromium unless
/// `APEX_REQUIRE_CHROMIUM` is set.
fn check_in_chromium(page: &Path, tmp: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    let charts = svgs(&html);
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("APEX_REQUIRE_CHROMIUM").is_none(),
            "Chromium is required here (APEX_REQUIRE_CHROMIUM) but was not found; install Debian's `chromium`"
        );
        skip_note("skipping the browser half: no chromium on PATH (install Debian's `chromium`)");
        return;
    };
    let page_shot = tmp.join("page.png");
    let log = screenshot(&chromium, page, &page_shot, (1400, 4000), tmp);
    for bad in [":CONSOLE(", "net::ERR_", "Failed to load resource"] {
        assert!(!log.contains(bad), "Chromium logged `{bad}`:\n{log}");
    }
    assert!(
        colored_pixels(&decode(&page_shot), None) > 1000,
        "the page drew"
    );

    // Pages of stacked charts no taller than a screenshot can be (a large run has hundreds).
    let mut pages: Vec<Vec<&str>> = vec![Vec::new()];
    let mut height = 0;
    for svg in &charts {
        let h = size(svg).1;
        if height + h > 12_000 && !pages.last().unwrap().is_empty() {
            pages.push(Vec::new());
            height = 0;
        }
        pages.last_mut().unwrap().push(svg);
        height += h;
    }
    for (p, page_charts) in pages.iter().enumerate() {
        let mut stacked = String::from(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0}div{position:absolute;left:0}</style></head><body>",
        );
        let mut areas = Vec::new();
        let mut top = 0u32;
        for svg in page_charts {
            let (w, h) = size(svg);
            stacked.push_str(&format!("<div style=\"top:{top}px\">{svg}</div>"));
            areas.push((top, w, h));
            top += h;
        }
        stacked.push_str("</body></html>");
        let stacked_path = tmp.join(format!("charts-{p}.html"));
        std::fs::write(&stacked_path, stacked).unwrap();
        let shot = tmp.join(format!("charts-{p}.png"));
        let width = areas.iter().map(|a| a.1).max().unwrap();
        screenshot(&chromium, &stacked_path, &shot, (width, top), tmp);
        let image = decode(&shot);
        for (i, &(top, w, h)) in areas.iter().enumerate() {
            let marks = colored_pixels(&image, Some((top, w, h)));
            assert!(
                marks >= 40,
                "chart {i} of page {p} ({w}x{h} at y={top}) has {marks} coloured pixels: it did not draw"
            );
        }
    }
}

#[expect(clippy::print_stderr, reason = "a skipped half of a test says so")]
fn skip_note(message: &str) {
    eprintln!("{message}");
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|name| {
            let ok = Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            ok.then(|| PathBuf::from(name))
        })
}

/// Opens `page` headless (no network: every host name resolves to nothing) and screenshots it
/// at `width × height`; returns what Chromium logged.
fn screenshot(
    chromium: &Path,
    page: &Path,
    png: &Path,
    (width, height): (u32, u32),
    tmp: &Path,
) -> String {
    let profile = tempfile::tempdir_in(tmp).unwrap();
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success() && png.is_file(),
        "chromium failed:\n{log}"
    );
    log
}

/// An RGBA8 image: width, height, pixels.
struct Image {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

fn decode(path: &Path) -> Image {
    let mut decoder =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgba = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| match channels {
            4 => [p[0], p[1], p[2], p[3]],
            3 => [p[0], p[1], p[2], 255],
            2 => [p[0], p[0], p[0], p[1]],
            _ => [p[0], p[0], p[0], 255],
        })
        .collect();
    Image {
        width: info.width,
        height: info.height,
        rgba,
    }
}

/// Pixels whose colour is saturated (max − min channel > 60): plotted data, not the black, grey
/// and white of axes, grid and text. Within `(top, width, height)` when given.
fn colored_pixels(image: &Image, area: Option<(u32, u32, u32)>) -> usize {
    let (top, w, h) = area.unwrap_or((0, image.width, image.height));
    let mut n = 0;
    for y in top..(top + h).min(image.height) {
        for x in 0..w.min(image.width) {
            let i = 4 * (y * image.width + x) as usize;
            let p = &image.rgba[i..i + 3];
            let max = *p.iter().max().unwrap();
            let min = *p.iter().min().unwrap();
            if max - min > 60 {
                n += 1;
            }
        }
    }
    n
}
