//! The link preview of a run page: a PNG of the flame graph for its Open Graph `og:image`.
//!
//! Chat tools and issue trackers unfurl a pasted link with its `og:image`, and none of them
//! shows SVG, so the preview is a raster image made at build time by tiny-skia (pure Rust, no
//! system library). It draws the graph's lowest rows as the page does: root at the bottom,
//! the full width is the root's total, rows [`ROW_HEIGHT`] pixels apart with a one-pixel gap
//! below each row and right of each box at least three pixels wide, each box in its name's
//! colour ([`color_of`]) on the page's off-white; a differential graph's boxes in the diff
//! colours of the change of their share ([`crate::graph::diff::color`]). Above the graph, a
//! header of up to three lines of words ([`HEADER`] pixels): which series, which run and when,
//! and for a comparison what changed most, so that a link pasted in a chat says them. They are
//! drawn with a subset of DejaVu Sans embedded in the binary (`src/graph/font`, Latin-1 and a few
//! symbols; a character it lacks is drawn as `?`), rasterised by ab_glyph: no system font.
//!
//! Boxes are pixel-aligned rectangles without anti-aliasing, their edges rounded from the
//! frame's offsets in integer arithmetic, so the same table gives the same pixels and, with
//! the same encoder, the same PNG bytes on every machine. The table is read once, in order;
//! rows deeper than the image shows or narrower than a pixel cost one comparison each.

use tiny_skia::{Color, Paint, Pixmap, Rect, Transform};

use crate::graph::color::{color_of, Palette};
use crate::graph::frames::FrameTable;

/// Width of the preview in pixels (the Open Graph recommended size).
pub const WIDTH: u32 = 1200;
/// Height of the preview in pixels (the Open Graph recommended size).
pub const HEIGHT: u32 = 630;
/// Distance between two rows, their gap included: the page's row height (`ROW_H` in
/// `main.js`).
pub const ROW_HEIGHT: u32 = 18;
/// Empty border around the graph on every side.
pub const MARGIN: u32 = 10;
/// Height of the header of words above the graph.
pub const HEADER: u32 = 132;
/// Number of depths drawn: as many whole rows as fit inside the margins, under the header.
pub const ROWS: u32 = (HEIGHT - 2 * MARGIN - HEADER) / ROW_HEIGHT;
/// The words' colours, `0xRRGGBB`: the page's text (`--fs-fg`) for the first line, a grey for
/// the others.
pub const TEXT: u32 = 0x22_22_22;
/// The colour of the lines after the first.
pub const TEXT_MUTED: u32 = 0x55_55_55;
/// Each line's size in pixels and its baseline.
const LINES: [(f32, f32); 3] = [(40.0, 52.0), (28.0, 90.0), (28.0, 124.0)];
/// The embedded font: DejaVu Sans, cut to Latin-1 and a few symbols (`src/graph/font`).
static FONT: &[u8] = include_bytes!("font/DejaVuSans-subset.ttf");
/// Background, `0xRRGGBB`: the page's off-white (`--fs-bg` in `flamesite.css`).
pub const BACKGROUND: u32 = 0xFA_FA_F7;

/// Background pixels between rows and between boxes, as `draw.js` leaves them at 1× zoom.
const GAP: u32 = 1;
/// Width of the graph itself: the root's total spans this many pixels.
const GRAPH_WIDTH: u32 = WIDTH - 2 * MARGIN;

/// The preview of `table` coloured with `palette`, under the lines of `words` (at most three;
/// each cut with `…` to the width), as PNG bytes of [`WIDTH`] × [`HEIGHT`] opaque RGBA
/// pixels. A table with nothing to draw (no frame, or a root of total 0) gives the words on
/// the bare background.
pub fn png(table: &FrameTable, palette: Palette, words: &[String]) -> Result<Vec<u8>, String> {
    let (mut pixmap, _) = render(table, palette)?;
    write_words(&mut pixmap, words)?;
    encode(&pixmap).map_err(|e| format!("cannot encode the preview PNG: {e}"))
}

/// Draws the lines of `words` in the header, left-aligned in the margin.
fn write_words(pixmap: &mut Pixmap, words: &[String]) -> Result<(), String> {
    use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
    let font = FontRef::try_from_slice(FONT).map_err(|e| format!("the embedded font: {e}"))?;
    let room = (WIDTH - 2 * MARGIN) as f32;
    for (k, (line, &(size, baseline))) in words.iter().zip(LINES.iter()).enumerate() {
        let scaled = font.as_scaled(PxScale::from(size));
        // What the font has; others as `?`.
        let chars: Vec<char> = line.chars().filter(|c| !c.is_control()).map(|c| if font.glyph_id(c).0 == 0 { '?' } else { c }).collect();
        let width = |cs: &[char]| cs.iter().map(|&c| scaled.h_advance(font.glyph_id(c))).sum::<f32>();
        let mut shown = chars.clone();
        if width(&shown) > room {
            while !shown.is_empty() && width(&shown) + scaled.h_advance(font.glyph_id('…')) > room {
                shown.pop();
            }
            shown.push('…');
        }
        let rgb = if k == 0 { TEXT } else { TEXT_MUTED };
        let mut caret = MARGIN as f32;
        for c in shown {
            let id = font.glyph_id(c);
            let glyph = id.with_scale_and_position(size, ab_glyph::point(caret, baseline));
            caret += scaled.h_advance(id);
            if let Some(outlined) = font.outline_glyph(glyph) {
                let b = outlined.px_bounds();
                outlined.draw(|gx, gy, coverage| blend(pixmap, b.min.x as i64 + i64::from(gx), b.min.y as i64 + i64::from(gy), rgb, coverage));
            }
        }
    }
    Ok(())
}

/// Mixes `rgb` into the opaque pixel at (`x`, `y`) by `coverage` (0 to 1), rounding each
/// channel: the same inputs give the same pixels on every machine.
fn blend(pixmap: &mut Pixmap, x: i64, y: i64, rgb: u32, coverage: f32) {
    if x < 0 || y < 0 || x >= i64::from(WIDTH) || y >= i64::from(HEADER + MARGIN) {
        return;
    }
    let a = (coverage.clamp(0.0, 1.0) * 255.0).round() as u32;
    let at = 4 * (y as usize * WIDTH as usize + x as usize);
    let data = pixmap.data_mut();
    for (i, shift) in [16u32, 8, 0].into_iter().enumerate() {
        let fg = (rgb >> shift) & 0xFF;
        let bg = u32::from(data[at + i]);
        data[at + i] = ((fg * a + bg * (255 - a) + 127) / 255) as u8;
    }
}

/// PNG bytes of `pixmap` as 8-bit RGB (the image is opaque) with the png crate's fast
/// compression: tiny-skia's own encoder writes RGBA at the default level, which was most of
/// a small profile's build; this is several times faster and the files stay small, the image
/// being flat colours (docs/BENCHMARKS.md, "Figures behind the code").
fn encode(pixmap: &Pixmap) -> Result<Vec<u8>, png::EncodingError> {
    let rgb: Vec<u8> = pixmap.data().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

/// The preview's pixels and the number of boxes painted.
fn render(table: &FrameTable, palette: Palette) -> Result<(Pixmap, usize), String> {
    let mut pixmap = Pixmap::new(WIDTH, HEIGHT).ok_or("cannot allocate the preview image")?;
    pixmap.fill(opaque(BACKGROUND));
    let grand = table.grand_total();
    if grand == 0 {
        return Ok((pixmap, 0));
    }
    // Offsets are below 2^53 and GRAPH_WIDTH below 2^11: u128 holds every product exactly.
    let grand_w = u128::from(grand);
    let graph_w = u128::from(GRAPH_WIDTH);
    // Pixel column of a value: value × width / total rounded half up (Math.round in draw.js),
    // and never past the graph's right edge, even for a malformed table.
    let x_of = |v: u64| -> u32 {
        let v = u128::from(v.min(grand));
        ((2 * v * graph_w + grand_w) / (2 * grand_w)) as u32
    };
    let mut paint = Paint {
        anti_alias: false,
        ..Paint::default()
    };
    let mut painted = 0;
    // A differential graph is drawn in the diff colours: the change of each frame's share.
    let deltas = table.before.is_some().then(|| crate::graph::diff::deltas(table, crate::graph::diff::Measure::Share));
    let rows = table.depth.iter().zip(&table.offset).zip(&table.total).zip(&table.name).enumerate();
    for (row, (((&depth, &offset), &total), &name)) in rows {
        // Narrower than one pixel: total / grand × width < 1.
        if depth >= ROWS || u128::from(total) * graph_w < grand_w {
            continue;
        }
        let x0 = x_of(offset);
        let mut x1 = x_of(offset.saturating_add(total));
        if x1 - x0 >= 3 * GAP {
            x1 -= GAP;
        }
        // A box at least a pixel wide is at least a pixel wide once rounded; this only skips
        // a frame that starts right of the root's end.
        if x1 <= x0 {
            continue;
        }
        let name = table
            .names
            .get(name as usize)
            .ok_or_else(|| format!("frame name {name} is not in the name table ({} names)", table.names.len()))?;
        let top = HEIGHT - MARGIN - (depth + 1) * ROW_HEIGHT;
        let rect = Rect::from_xywh((MARGIN + x0) as f32, top as f32, (x1 - x0) as f32, (ROW_HEIGHT - GAP) as f32)
            .ok_or("preview box out of range")?;
        let rgb = match &deltas {
            Some((d, scale)) => crate::graph::diff::color(d[row], *scale),
            None => color_of(name, palette),
        };
        paint.set_color(opaque(rgb));
        pixmap.fill_rect(rect, &paint, Transform::identity(), None);
        painted += 1;
    }
    Ok((pixmap, painted))
}

/// `0xRRGGBB` as an opaque colour.
fn opaque(rgb: u32) -> Color {
    Color::from_rgba8((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8, 255)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::frames::{StackMerger, NO_PARENT, ROOT_NAME};

    fn table(stacks: &[(&str, u64)]) -> FrameTable {
        let mut m = StackMerger::new(false, 100_000);
        for (stack, count) in stacks {
            m.add(stack.as_bytes(), *count, 0).unwrap();
        }
        m.finish().unwrap()
    }

    fn decode(bytes: &[u8]) -> Pixmap {
        Pixmap::decode_png(bytes).unwrap()
    }

    /// `0xRRGGBB` of a pixel of an opaque image.
    fn rgb_at(p: &Pixmap, x: u32, y: u32) -> u32 {
        let c = p.pixel(x, y).unwrap();
        assert_eq!(c.alpha(), 255, "pixel ({x}, {y}) is opaque");
        (u32::from(c.red()) << 16) | (u32::from(c.green()) << 8) | u32::from(c.blue())
    }

    /// A y inside the band of row `depth`, halfway down its painted part.
    fn band_y(depth: u32) -> u32 {
        HEIGHT - MARGIN - (depth + 1) * ROW_HEIGHT + (ROW_HEIGHT - GAP) / 2
    }

    fn two_halves() -> FrameTable {
        table(&[("a;x", 50), ("b;y", 50)])
    }

    /// How many pixels of the header's line `k` (0 to 2) are text, of colour near `rgb`.
    fn text_pixels(p: &Pixmap, k: usize, rgb: u32) -> usize {
        let (size, baseline) = LINES[k];
        let (top, bottom) = ((baseline - size) as u32, baseline as u32 + 4);
        let near = |c: u32| [16, 8, 0].iter().all(|&sh| ((c >> sh) & 0xFF).abs_diff((rgb >> sh) & 0xFF) < 24);
        (top..bottom).flat_map(|y| (0..WIDTH).map(move |x| (x, y))).filter(|&(x, y)| near(rgb_at(p, x, y))).count()
    }

    #[test]
    fn the_header_has_its_words_in_the_embedded_font_and_the_same_words_give_the_same_bytes() {
        let words = ["api".to_string(), "2026-11-18 · nightly".to_string(), "▲ malloc +3.2 pp".to_string()];
        let bytes = png(&two_halves(), Palette::Hot, &words).unwrap();
        let p = decode(&bytes);
        // Text in each line's box, none without words.
        assert!(text_pixels(&p, 0, TEXT) > 200, "{}", text_pixels(&p, 0, TEXT));
        assert!(text_pixels(&p, 1, TEXT_MUTED) > 200);
        assert!(text_pixels(&p, 2, TEXT_MUTED) > 200);
        let bare = decode(&png(&two_halves(), Palette::Hot, &[]).unwrap());
        assert_eq!((text_pixels(&bare, 0, TEXT), text_pixels(&bare, 1, TEXT_MUTED)), (0, 0));
        // Other words, other pixels; the same words, the same bytes.
        let other = decode(&png(&two_halves(), Palette::Hot, &["web".to_string()]).unwrap());
        assert_ne!((0..WIDTH).map(|x| rgb_at(&p, x, 40)).collect::<Vec<_>>(), (0..WIDTH).map(|x| rgb_at(&other, x, 40)).collect::<Vec<_>>());
        assert_eq!(bytes, png(&two_halves(), Palette::Hot, &words).unwrap());
        // A line too long for the width is cut with an ellipsis inside the margins; a character
        // the font lacks is drawn, not dropped.
        let long = decode(&png(&two_halves(), Palette::Hot, &["x".repeat(500), "漢字 ok".to_string()]).unwrap());
        assert!((0..HEADER).all(|y| rgb_at(&long, WIDTH - MARGIN / 2, y) == BACKGROUND), "the right margin stays empty");
        assert!(text_pixels(&long, 1, TEXT_MUTED) > 50);
        // The graph keeps its place under the header.
        assert_eq!(rgb_at(&p, WIDTH / 2, band_y(0)), color_of(ROOT_NAME, Palette::Hot));
    }

    #[test]
    fn decodes_to_the_open_graph_size_with_the_root_at_the_bottom() {
        let bytes = png(&two_halves(), Palette::Hot, &[]).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let p = decode(&bytes);
        assert_eq!((p.width(), p.height()), (1200, 630));
        assert_eq!(rgb_at(&p, WIDTH / 2, band_y(0)), color_of(ROOT_NAME, Palette::Hot));
        // A 3-row graph leaves the top of the image empty, and the margins too.
        assert_eq!(rgb_at(&p, WIDTH / 2, 0), BACKGROUND);
        assert_eq!(rgb_at(&p, WIDTH / 2, band_y(3)), BACKGROUND);
        assert_eq!(rgb_at(&p, WIDTH / 2, HEIGHT - 1), BACKGROUND);
        assert_eq!(rgb_at(&p, 0, band_y(0)), BACKGROUND);
        assert_eq!(rgb_at(&p, WIDTH - 1, band_y(0)), BACKGROUND);
    }

    #[test]
    fn children_split_the_width_by_their_totals() {
        let t = two_halves();
        for palette in [Palette::Hot, Palette::Blue] {
            let p = decode(&png(&t, palette, &[]).unwrap());
            let (a, b) = (color_of("a", palette), color_of("b", palette));
            assert_ne!(a, b);
            assert_eq!(rgb_at(&p, 300, band_y(1)), a);
            assert_eq!(rgb_at(&p, 900, band_y(1)), b);
            assert_eq!(rgb_at(&p, 300, band_y(2)), color_of("x", palette));
            assert_eq!(rgb_at(&p, 900, band_y(2)), color_of("y", palette));
            // The one-pixel gaps: right of `a` (which ends at the middle) and below each row.
            assert_eq!(rgb_at(&p, MARGIN + GRAPH_WIDTH / 2 - 1, band_y(1)), BACKGROUND);
            assert_eq!(rgb_at(&p, MARGIN + GRAPH_WIDTH / 2, band_y(1)), b);
            assert_eq!(rgb_at(&p, 300, HEIGHT - MARGIN - ROW_HEIGHT - 1), BACKGROUND);
        }
    }

    #[test]
    fn the_same_stacks_in_any_order_give_the_same_bytes() {
        // One profile's stacks as two writers may list them: the preview is the graph's, not
        // the file's order. (Across processes and thread counts: tests/build.rs.)
        let stacks = [("main;parse;lex", 7), ("main;parse", 3), ("main;eval;alloc", 11), ("gc", 2), ("main;eval", 1)];
        let mut reversed = stacks;
        reversed.reverse();
        let first = png(&table(&stacks), Palette::Hot, &[]).unwrap();
        assert_eq!(first, png(&table(&reversed), Palette::Hot, &[]).unwrap());
        // And the palette is in the picture.
        assert_ne!(first, png(&table(&stacks), Palette::Blue, &[]).unwrap());
    }

    #[test]
    fn an_empty_graph_is_the_bare_background() {
        let root_only = FrameTable {
            names: vec![ROOT_NAME.to_string()],
            name: vec![0],
            depth: vec![0],
            parent: vec![NO_PARENT],
            offset: vec![0],
            total: vec![0],
            self_: vec![0],
            before: None,
            after: None,
            layout: Default::default(),
            decimals: 0,
            raw: Default::default(),
        };
        for t in [root_only, FrameTable::default()] {
            let (pixmap, painted) = render(&t, Palette::Hot).unwrap();
            assert_eq!(painted, 0);
            let p = decode(&png(&t, Palette::Hot, &[]).unwrap());
            assert_eq!(p, pixmap);
            assert!(p.pixels().iter().all(|c| c.alpha() == 255));
            assert_eq!(rgb_at(&p, WIDTH / 2, band_y(0)), BACKGROUND);
        }
    }

    #[test]
    fn a_deep_graph_stops_at_the_top_row() {
        let stack = (0..10_000).map(|i| format!("f{i}")).collect::<Vec<_>>().join(";");
        let t = table(&[(&stack, 1)]);
        assert_eq!(t.depth_count(), 10_001);
        let (p, painted) = render(&t, Palette::Hot).unwrap();
        assert_eq!(painted, ROWS as usize);
        let top = ROWS - 1;
        assert_eq!(rgb_at(&p, WIDTH / 2, band_y(top)), color_of(&format!("f{}", top - 1), Palette::Hot));
        let first_painted = HEIGHT - MARGIN - ROWS * ROW_HEIGHT;
        assert!(first_painted >= MARGIN);
        for y in 0..first_painted {
            for x in 0..WIDTH {
                assert_eq!(rgb_at(&p, x, y), BACKGROUND, "pixel ({x}, {y}) above the top row");
            }
        }
    }

    #[test]
    fn a_frame_narrower_than_a_pixel_is_skipped() {
        // `b` is 1/100001 of the width: about 0.01 px.
        let t = table(&[("a", 50_000), ("b", 1), ("c", 50_000)]);
        let b = color_of("b", Palette::Hot);
        assert_ne!(b, color_of("a", Palette::Hot));
        assert_ne!(b, color_of("c", Palette::Hot));
        let (p, painted) = render(&t, Palette::Hot).unwrap();
        assert_eq!(painted, 3, "root, a and c");
        let y = band_y(1);
        assert!((0..WIDTH).all(|x| rgb_at(&p, x, y) != b));
        assert_eq!(rgb_at(&p, 300, y), color_of("a", Palette::Hot));
        assert_eq!(rgb_at(&p, 900, y), color_of("c", Palette::Hot));
        // One pixel wide is enough: `b` at 1/1180 of the total is drawn, a single column.
        let t = table(&[("a", 589), ("b", 1), ("c", 590)]);
        let (p, painted) = render(&t, Palette::Hot).unwrap();
        assert_eq!(painted, 4);
        assert_eq!((0..WIDTH).filter(|&x| rgb_at(&p, x, y) == b).count(), 1);
    }

    #[test]
    fn a_malformed_name_index_is_an_error_not_a_panic() {
        let mut t = two_halves();
        t.name[1] = 1_000;
        assert!(png(&t, Palette::Hot, &[]).unwrap_err().contains("1000"));
    }
}
