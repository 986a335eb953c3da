//! The marks the HTML pages show (pass, fail, warning) as inline SVG, so they need no font:
//! ✅/❌ (and even ✔/✘/⚠) show as empty boxes where no emoji or symbol font is installed — a
//! CI artifact viewer, a server. [`font_safe`] says whether a page's text keeps to characters
//! the common text fonts (DejaVu, Liberation) carry; the pages' tests hold them to it.

/// A check mark, `size` pixels square, in the surrounding text's colour, with `label` for
/// screen readers.
pub fn check(size: u32, label: &str) -> String {
    icon(size, label, "M3 8.5l3.2 3.2L13 4.8")
}

/// A cross.
pub fn cross(size: u32, label: &str) -> String {
    icon(size, label, "M4 4l8 8M12 4l-8 8")
}

/// A warning triangle with its bar and dot.
pub fn warning(size: u32, label: &str) -> String {
    icon(size, label, "M8 2L15 14H1Z M8 6.5v3.5 M8 12v.01")
}

fn icon(size: u32, label: &str, path: &str) -> String {
    format!(
        "<svg class=\"icon\" width=\"{size}\" height=\"{size}\" viewBox=\"0 0 16 16\" role=\"img\" aria-label=\"{label}\" style=\"vertical-align:-2px\"><path d=\"{path}\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2\" stroke-linecap=\"round\" stroke-linejoin=\"round\"/></svg>"
    )
}

/// Whether every character of `text` is one the common text fonts carry: Latin, Greek and
/// Cyrillic, general punctuation (– — … •), arrows (→), mathematical operators (≤ ≥ − ×), box
/// drawing — and nothing from the symbol and emoji blocks (U+2600 and up).
pub fn font_safe(text: &str) -> Result<(), char> {
    match text.chars().find(|&c| {
        let c = c as u32;
        !(c < 0x0530 || (0x2000..=0x22FF).contains(&c) || (0x2500..=0x257F).contains(&c))
    }) {
        Some(c) => Err(c),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_and_symbols_are_not_font_safe_but_text_and_icons_are() {
        for c in ['✅', '❌', '✔', '✘', '⚠', '📈'] {
            assert_eq!(font_safe(&format!("a {c} b")), Err(c));
        }
        assert_eq!(font_safe("≤ 5 ms – p99 → 2× (1.5%) — “ok”"), Ok(()));
        assert_eq!(font_safe(&check(14, "pass")), Ok(()));
        assert_eq!(font_safe(&cross(14, "fail")), Ok(()));
        assert_eq!(font_safe(&warning(14, "warning")), Ok(()));
    }
}
