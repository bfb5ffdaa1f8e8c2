//! The report's charts, drawn with plotters' SVG backend: each function returns one `<svg>`
//! element as text. Text is drawn as SVG `<text>` in the browser's sans-serif font (no font
//! files: plotters' layout only estimates text widths, so labels get generous room).

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use super::figures::{
    size_bin_start, Histogram, Night, SizeShare, SHARE_BINS, SIZE_BINS_PER_DECADE,
};

/// The colours of the data marks, one per series.
pub const SERIES: [RGBColor; 2] = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xff, 0x7f, 0x0e)];
/// The heat map's densest cell; emptier ones fade towards white.
const DENSE: RGBColor = RGBColor(0x08, 0x30, 0x6b);

const WIDTH: u32 = 860;
const FONT: &str = "sans-serif";

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn fail(e: impl std::fmt::Display) -> String {
    format!("drawing a chart: {e}")
}

/// Runs `draw` on a white canvas of `height` pixels and returns the SVG.
fn svg(height: u32, draw: impl FnOnce(&Area) -> Result<(), String>) -> Result<String, String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        draw(&root)?;
        root.present().map_err(fail)?;
    }
    Ok(text)
}

/// The series' legend, upper right.
fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font((FONT, 13))
        .draw()
        .map_err(fail)
}

/// A chart's frame: margins and room for the axis labels (`y_labels` pixels on the left).
fn frame<'a, 'b>(root: &'a Area<'b>, y_labels: u32) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y_labels);
    builder
}

fn percent(share: &f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// A count as a short label: 1234 → 1.2k, 2500000 → 2.5M.
pub fn short(count: f64) -> String {
    let magnitude = count.abs();
    if magnitude >= 1e9 {
        format!("{:.1}G", count / 1e9)
    } else if magnitude >= 1e6 {
        format!("{:.1}M", count / 1e6)
    } else if magnitude >= 1e4 {
        format!("{:.0}k", count / 1e3)
    } else if magnitude >= 1e3 {
        format!("{:.1}k", count / 1e3)
    } else if count.fract() == 0.0 {
        format!("{count:.0}")
    } else {
        format!("{count:.1}")
    }
}

/// Histograms over shares in [0, 1], side by side in each bin: one series per `(name,
/// histogram)`, bars as the share of the series' rows (so series of different sizes compare).
pub fn share_histograms(series: &[(&str, &Histogram)], x_desc: &str) -> Result<String, String> {
    let share_of = |h: &Histogram, n: u64| n as f64 / h.counted().max(1) as f64;
    let top = series
        .iter()
        .flat_map(|(_, h)| h.bins.iter().map(move |n| share_of(h, *n)))
        .fold(0.0f64, f64::max)
        .max(0.01);
    svg(340, |root| {
        let mut chart = frame(root, 64)
            .build_cartesian_2d(0f64..1f64, 0f64..top * 1.08)
            .map_err(fail)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(11)
            .x_label_formatter(&percent)
            .y_label_formatter(&percent)
            .x_desc(x_desc)
            .y_desc("share of rows")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(fail)?;
        let width = 1.0 / SHARE_BINS as f64;
        let bar = width * 0.8 / series.len().max(1) as f64;
        for (s, (name, histogram)) in series.iter().enumerate() {
            let colour = SERIES[s % SERIES.len()];
            let bars = histogram.bins.iter().enumerate().filter(|(_, n)| **n > 0);
            chart
                .draw_series(bars.map(|(b, n)| {
                    let x0 = b as f64 * width + width * 0.1 + s as f64 * bar;
                    Rectangle::new(
                        [(x0, 0.0), (x0 + bar, share_of(histogram, *n))],
                        colour.filled(),
                    )
                }))
                .map_err(fail)?
                .label(format!("{name} ({} rows)", histogram.counted()))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        legend(&mut chart)
    })
}

/// One bar of [`bars`]: its name (the axis label), length, and the text at its end.
pub struct Bar {
    pub name: String,
    pub value: f64,
    pub note: String,
}

/// Horizontal bars, first at the top.
pub fn bars(items: &[Bar], x_desc: &str) -> Result<String, String> {
    let n = items.len().max(1);
    let top = items
        .iter()
        .map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.18 } else { 1.0 };
    let longest = items
        .iter()
        .map(|b| b.name.chars().count())
        .max()
        .unwrap_or(0);
    // The naive font estimate is about 0.45 em a character at 13 px.
    let label_area = (longest as u32 * 7 + 16).clamp(60, 340);
    let height = 70 + 24 * n as u32;
    let row = |i: usize| (n - 1 - i) as i32;
    svg(height, |root| {
        let mut chart = frame(root, label_area)
            .build_cartesian_2d(0f64..top, (0..n as i32 - 1).into_segmented())
            .map_err(fail)?;
        let label_of = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(r) => {
                let i = n as i32 - 1 - r;
                usize::try_from(i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .map(|b| b.name.clone())
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        let short_label = |v: &f64| short(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label_of)
            .x_label_formatter(&short_label)
            .x_desc(x_desc)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(fail)?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, b)| {
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row(i))),
                        (b.value.max(0.0), SegmentValue::Exact(row(i) + 1)),
                    ],
                    SERIES[0].filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(fail)?;
        chart
            .draw_series(items.iter().enumerate().map(|(i, b)| {
                Text::new(
                    format!(" {}", b.note),
                    (b.value.max(0.0), SegmentValue::CenterOf(row(i))),
                    (FONT, 12).into_font().color(&BLACK),
                )
            }))
            .map_err(fail)?;
        Ok(())
    })
}

/// HTML bytes as a short label: 1000 → 1 kB.
fn bytes(size: f64) -> String {
    if size >= 1e6 {
        format!("{} MB", short(size / 1e6))
    } else if size >= 1e3 {
        format!("{} kB", short(size / 1e3))
    } else {
        format!("{size:.0} B")
    }
}

/// Templated share against page size: the 2-D bins as a heat map (darker: more pages, on a
/// log scale) and each size bin's mean share as a line with points.
pub fn size_share(figures: &SizeShare) -> Result<String, String> {
    let (first, last) = figures.occupied().unwrap_or((0, 0));
    let densest = figures.densest().max(1) as f64;
    svg(380, |root| {
        let mut chart = frame(root, 64)
            .build_cartesian_2d(first as f64..(last + 1) as f64, 0f64..1f64)
            .map_err(fail)?;
        let size_label = |bin: &f64| bytes(10f64.powf(bin / SIZE_BINS_PER_DECADE as f64));
        chart
            .configure_mesh()
            .x_label_formatter(&size_label)
            .y_label_formatter(&percent)
            .x_desc("page size (HTML bytes, log scale)")
            .y_desc("templated share")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(fail)?;
        let step = 1.0 / SHARE_BINS as f64;
        let cells = (first..=last).flat_map(|size| {
            figures.cells[size]
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(move |(share, n)| (size, share, *n))
        });
        chart
            .draw_series(cells.map(|(size, share, n)| {
                // log scale from 1 page (lightest shown) to the densest cell.
                let depth = 0.15 + 0.85 * (1.0 + n as f64).ln() / (1.0 + densest).ln();
                let mix = |dense: u8| (255.0 - (255.0 - f64::from(dense)) * depth).round() as u8;
                let colour = RGBColor(mix(DENSE.0), mix(DENSE.1), mix(DENSE.2));
                Rectangle::new(
                    [
                        (size as f64, share as f64 * step),
                        ((size + 1) as f64, (share + 1) as f64 * step),
                    ],
                    colour.filled(),
                )
            }))
            .map_err(fail)?;
        let means: Vec<(f64, f64)> = (first..=last)
            .filter_map(|size| Some((size as f64 + 0.5, figures.means[size].value()?)))
            .collect();
        chart
            .draw_series(LineSeries::new(
                means.iter().copied(),
                SERIES[1].stroke_width(2),
            ))
            .map_err(fail)?
            .label("mean share of the size bin")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], SERIES[1].stroke_width(2)));
        chart
            .draw_series(means.iter().map(|p| Circle::new(*p, 3, SERIES[1].filled())))
            .map_err(fail)?;
        legend(&mut chart)
    })
}

/// The smallest size of a size bin, as the axis labels it (for the report's text).
pub fn size_bin_label(bin: usize) -> String {
    bytes(size_bin_start(bin))
}

/// Templated share over nights: one point per night, joined by a line.
pub fn nights(nights: &[Night]) -> Result<String, String> {
    let first = nights.iter().map(|n| n.night).min().unwrap_or(1);
    let last = nights.iter().map(|n| n.night).max().unwrap_or(1);
    let points: Vec<(f64, f64)> = nights
        .iter()
        .filter_map(|n| Some((f64::from(n.night), n.share.value()?)))
        .collect();
    let top = points.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let top = (top * 1.2).clamp(0.05, 1.0);
    svg(320, |root| {
        let mut chart = frame(root, 64)
            .build_cartesian_2d(f64::from(first) - 0.5..f64::from(last) + 0.5, 0f64..top)
            .map_err(fail)?;
        let night_label = |v: &f64| {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels((last - first + 2) as usize)
            .x_label_formatter(&night_label)
            .y_label_formatter(&percent)
            .x_desc("night")
            .y_desc("mean templated share of the night's hosts")
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(fail)?;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                SERIES[0].stroke_width(2),
            ))
            .map_err(fail)?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new(*p, 4, SERIES[0].filled())),
            )
            .map_err(fail)?;
        Ok(())
    })
}
