//! Pictures of an incast run (`rocenic dcqcn --plot FILE.png`): each
//! flow's rate on the bottleneck over time above, the switch queue (the
//! window's time-weighted mean and its maximum) below, one point per
//! measurement window.

use crate::incast::IncastReport;
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

const SIZE: (u32, u32) = (1200, 800);
/// The font the pictures are labelled in, registered once per process.
const FONT: &str = "sans-serif";

fn register() -> Result<()> {
    static REGISTER: Once = Once::new();
    let mut failed = false;
    REGISTER.call_once(|| {
        failed =
            register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT).is_err();
    });
    if failed {
        return Err(anyhow!("the embedded font did not load"));
    }
    Ok(())
}

/// A panel's chart builder: room for the axis labels below and on both
/// sides.
fn panel<'a, 'b>(
    area: &'a DrawingArea<BitMapBackend<'b>, Shift>,
) -> ChartBuilder<'a, 'b, BitMapBackend<'b>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .right_y_label_area_size(64);
    builder
}

/// Draws `report` as a PNG at `path`.
pub fn plot_incast(report: &IncastReport, title: &str, path: &Path) -> Result<()> {
    register()?;
    let samples = &report.samples;
    let window_ms = match samples.get(1) {
        Some(s) => s.start_ns as f64 / 1e6,
        None => 1.0,
    };
    // A point in the middle of its window.
    let at = |start_ns: u64| start_ns as f64 / 1e6 + window_ms / 2.0;
    let end_ms = samples
        .last()
        .map_or(1.0, |s| at(s.start_ns) + window_ms / 2.0);
    let top_rate = samples
        .iter()
        .flat_map(|s| s.flow_gbps.iter().copied())
        .fold(report.line_rate_gbps / 4.0, f64::max)
        * 1.05;
    let top_queue = samples
        .iter()
        .map(|s| s.queue_bytes_max as f64 / 1e3)
        .fold(1.0, f64::max)
        * 1.05;

    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| anyhow!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let root = root.titled(title, (FONT, 24)).map_err(|e| fail(&e))?;
    let (upper, lower) = root.split_vertically(SIZE.1 * 3 / 5);

    let mut rates = panel(&upper)
        .build_cartesian_2d(0.0..end_ms, 0.0..top_rate)
        .map_err(|e| fail(&e))?
        // All flows together against the link, on the right-hand axis.
        .set_secondary_coord(0.0..end_ms, 0.0..report.line_rate_gbps * 1.05);
    rates
        .configure_mesh()
        .x_desc("time (ms)")
        .y_desc("each flow (Gb/s)")
        .label_style((FONT, 16))
        .draw()
        .map_err(|e| fail(&e))?;
    let flows = samples.first().map_or(0, |s| s.flow_gbps.len());
    for flow in 0..flows {
        let colour = Palette99::pick(flow).to_rgba();
        rates
            .draw_series(LineSeries::new(
                samples.iter().map(|s| (at(s.start_ns), s.flow_gbps[flow])),
                colour.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?;
    }
    rates
        .configure_secondary_axes()
        .y_desc("all flows (Gb/s)")
        .label_style((FONT, 16))
        .draw()
        .map_err(|e| fail(&e))?;
    rates
        .draw_secondary_series(LineSeries::new(
            samples
                .iter()
                .map(|s| (at(s.start_ns), s.utilisation * report.line_rate_gbps)),
            BLACK.stroke_width(1),
        ))
        .map_err(|e| fail(&e))?
        .label("all flows (right axis)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    rates
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;

    let mut queue = panel(&lower)
        .build_cartesian_2d(0.0..end_ms, 0.0..top_queue)
        .map_err(|e| fail(&e))?;
    queue
        .configure_mesh()
        .x_desc("time (ms)")
        .y_desc("switch queue (KB)")
        .label_style((FONT, 16))
        .draw()
        .map_err(|e| fail(&e))?;
    for (name, colour, value) in [
        (
            "mean",
            BLUE,
            &(|s: &crate::incast::Sample| s.queue_bytes_mean) as &dyn Fn(_) -> f64,
        ),
        ("maximum", RED, &|s: &crate::incast::Sample| {
            s.queue_bytes_max as f64
        }),
    ] {
        queue
            .draw_series(LineSeries::new(
                samples.iter().map(|s| (at(s.start_ns), value(s) / 1e3)),
                colour.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
    }
    queue
        .configure_series_labels()
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
