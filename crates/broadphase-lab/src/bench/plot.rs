//! The charts of a bench run, as SVG drawn with plotters: frame time against the number of
//! boxes (log-log, one line per contender), bars per scene at one size, and memory per box.

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::bench::report::{contender_names, size_label};
use crate::bench::{BenchError, BenchReport, CellResult};

/// Frame time against N, for the options' plot scene.
pub const FRAME_TIME: &str = "frame_time_vs_n.svg";
/// Bars per scene at 100k boxes (or the largest size run).
pub const SCENES: &str = "scenes.svg";
/// Memory per box, for the plot scene.
pub const MEMORY: &str = "memory.svg";

const SIZE: (u32, u32) = (960, 600);

fn plot_error(e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot(e.to_string())
}

/// The cells the charts draw: for each scene and size, the one with the fewest threads
/// (where the peers ran).
fn base_cells(report: &BenchReport) -> Vec<&CellResult> {
    let mut out: Vec<&CellResult> = Vec::new();
    for c in &report.cells {
        match out.iter_mut().find(|o| o.scene == c.scene && o.n == c.n) {
            Some(o) if c.threads < o.threads => *o = c,
            Some(_) => {}
            None => out.push(c),
        }
    }
    out
}

/// The scene the per-scene charts show: the plot scene if it ran, else the first.
fn plot_scene(report: &BenchReport) -> String {
    let wanted = report.options.plot_scene.name();
    if report.cells.iter().any(|c| c.scene == wanted) {
        wanted.to_string()
    } else {
        report
            .cells
            .first()
            .map_or_else(String::new, |c| c.scene.clone())
    }
}

/// The size of the per-scene bars: 100k if it ran, else the largest.
fn bar_size(report: &BenchReport) -> usize {
    let sizes: Vec<usize> = report.cells.iter().map(|c| c.n).collect();
    if sizes.contains(&100_000) {
        100_000
    } else {
        sizes.into_iter().max().unwrap_or(0)
    }
}

/// A range around `lo..hi` (positive) with room on a log axis.
fn log_range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let lo = lo.max(1e-6);
    (lo / 1.5)..(hi.max(lo) * 1.5)
}

fn draw(
    name: &str,
    report: &BenchReport,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<(), BenchError> {
    area.fill(&WHITE).map_err(plot_error)?;
    match name {
        FRAME_TIME => frame_time(report, area),
        SCENES => scenes(report, area),
        _ => memory(report, area),
    }
}

/// Every chart of the run, by file name.
///
/// # Errors
/// [`BenchError::Plot`] when plotters fails.
pub fn charts(report: &BenchReport) -> Result<Vec<(&'static str, String)>, BenchError> {
    let mut out = Vec::new();
    for name in [FRAME_TIME, SCENES, MEMORY] {
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            draw(name, report, &area)?;
            area.present().map_err(plot_error)?;
        }
        out.push((name, svg));
    }
    Ok(out)
}

fn frame_time(
    report: &BenchReport,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<(), BenchError> {
    let scene = plot_scene(report);
    let cells: Vec<&CellResult> = base_cells(report)
        .into_iter()
        .filter(|c| c.scene == scene)
        .collect();
    let points = || {
        cells
            .iter()
            .flat_map(|c| c.contenders.iter().map(|k| (c.n as f64, k.frame_ms.median)))
    };
    let (nx, xx) = points().fold((f64::MAX, 0.0f64), |(a, b), (x, _)| (a.min(x), b.max(x)));
    let (ny, xy) = points().fold((f64::MAX, 0.0f64), |(a, b), (_, y)| (a.min(y), b.max(y)));
    let threads = cells.first().map_or(1, |c| c.threads);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "{scene}: ms per frame against boxes ({}, log-log)",
                crate::run::threads(threads)
            ),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(log_range(nx, xx).log_scale(), log_range(ny, xy).log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("boxes")
        .y_desc("ms per frame (median)")
        .x_label_formatter(&|x| size_label(x.round() as usize))
        .draw()
        .map_err(plot_error)?;
    for (i, name) in contender_names(report).iter().enumerate() {
        let series: Vec<(f64, f64)> = cells
            .iter()
            .filter_map(|c| {
                c.contenders
                    .iter()
                    .find(|k| &k.name == name)
                    .map(|k| (c.n as f64, k.frame_ms.median))
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        let color = Palette99::pick(i).to_rgba();
        let peer = cells
            .iter()
            .flat_map(|c| &c.contenders)
            .any(|k| &k.name == name && k.peer);
        let style = if peer {
            color.stroke_width(1)
        } else {
            color.stroke_width(2)
        };
        chart
            .draw_series(LineSeries::new(series.clone(), style))
            .map_err(plot_error)?
            .label(if peer {
                format!("{name} (peer)")
            } else {
                name.clone()
            })
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(series.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(plot_error)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// Draws the chart's legend at `position`.
fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), BenchError> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(plot_error)
}

/// Grouped bars on a log axis: one group per label, one bar per contender in each.
fn bars(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    y_desc: &str,
    groups: &[(String, Vec<(usize, f64)>)],
    names: &[String],
) -> Result<(), BenchError> {
    let values = || groups.iter().flat_map(|(_, v)| v.iter().map(|&(_, y)| y));
    let hi = values().fold(0.0f64, f64::max).max(1e-6);
    let lo = values().fold(f64::MAX, f64::min).min(hi);
    let (y0, y1) = (lo.max(1e-6) / 2.0, hi * 2.0);
    let k = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..k, (y0..y1).log_scale())
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor();
            if (x - i - 0.5).abs() < 0.01 {
                groups
                    .get(i as usize)
                    .map_or_else(String::new, |g| g.0.clone())
            } else {
                String::new()
            }
        })
        .y_desc(y_desc)
        .draw()
        .map_err(plot_error)?;
    let width = 0.8 / names.len().max(1) as f64;
    for (j, name) in names.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        let rects: Vec<Rectangle<(f64, f64)>> = groups
            .iter()
            .enumerate()
            .filter_map(|(g, (_, v))| {
                v.iter().find(|&&(c, _)| c == j).map(|&(_, y)| {
                    let x = g as f64 + 0.1 + j as f64 * width;
                    Rectangle::new([(x, y0), (x + width * 0.9, y.max(y0))], color.filled())
                })
            })
            .collect();
        if rects.is_empty() {
            continue;
        }
        chart
            .draw_series(rects)
            .map_err(plot_error)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn scenes(
    report: &BenchReport,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<(), BenchError> {
    let n = bar_size(report);
    let names = contender_names(report);
    let groups: Vec<(String, Vec<(usize, f64)>)> = base_cells(report)
        .into_iter()
        .filter(|c| c.n == n)
        .map(|c| {
            let v = c
                .contenders
                .iter()
                .filter_map(|k| {
                    names
                        .iter()
                        .position(|m| m == &k.name)
                        .map(|j| (j, k.frame_ms.median))
                })
                .collect();
            (c.scene.clone(), v)
        })
        .collect();
    let caption = format!("ms per frame by scene, {} boxes (log scale)", size_label(n));
    bars(area, &caption, "ms per frame (median)", &groups, &names)
}

fn memory(
    report: &BenchReport,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<(), BenchError> {
    let n = bar_size(report);
    let names = contender_names(report);
    let scene = plot_scene(report);
    let cell = base_cells(report)
        .into_iter()
        .find(|c| c.n == n && c.scene == scene);
    let per_proxy = |steady: bool| -> Vec<(usize, f64)> {
        cell.iter()
            .flat_map(|c| &c.contenders)
            .filter_map(|k| {
                let m = k.memory.as_ref()?;
                let j = names.iter().position(|x| x == &k.name)?;
                Some((
                    j,
                    if steady {
                        m.steady_per_proxy
                    } else {
                        m.peak_per_proxy
                    },
                ))
            })
            .collect()
    };
    let groups = vec![
        ("steady".to_string(), per_proxy(true)),
        ("peak".to_string(), per_proxy(false)),
    ];
    let caption = if report.memory_measured {
        format!("bytes per box, {scene} {} boxes (log scale)", size_label(n))
    } else {
        "memory not measured (no counting allocator)".to_string()
    };
    bars(area, &caption, "bytes per box", &groups, &names)
}
