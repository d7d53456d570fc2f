//! What `bplab` prints on standard output.

use std::io::{self, Write};
use std::process::ExitCode;

/// Writes `text` to standard output. A reader that has gone away (`bplab list | head -3`) is
/// not an error: the rest of the output was not wanted. Any other failure is returned.
pub fn print(text: &str) -> io::Result<()> {
    write_to(&mut io::stdout().lock(), text)
}

/// [`print()`]s `text`, for a command's last output: success, or failure (said on standard
/// error) when it cannot be written.
pub fn print_or_fail(text: &str) -> ExitCode {
    match print(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bplab: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Opens an SVG picture of `width` by `height` pixels on a white ground, as `bplab regions`
/// and `bplab cells` draw them.
pub fn svg_open(out: &mut String, width: f64, height: f64) {
    out.push_str(&format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0}" viewBox="0 0 {width} {height:.0}" font-family="sans-serif" font-size="10">"#
    ));
    out.push_str("\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
}

/// Closes an [`svg_open`]ed picture with a caption of `text` at `(x, y)`.
pub fn svg_close(out: &mut String, x: f64, y: f64, text: &str) {
    out.push_str(&format!(
        "<text x=\"{x}\" y=\"{y:.0}\" font-size=\"12\">{text}</text>\n</svg>\n"
    ));
}

/// How `bplab run` prints its results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people.
    #[default]
    Table,
    /// One JSON object: the run's settings and a row per algorithm.
    Json,
    /// A header line, then a row per algorithm.
    Csv,
}

/// One CSV line (RFC 4180): fields joined by commas, a field holding a comma, a quote or a
/// line break quoted, with its quotes doubled.
pub fn csv_line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut out = String::new();
    for (i, field) in fields.iter().enumerate() {
        let field = field.as_ref();
        if i > 0 {
            out.push(',');
        }
        if field.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
    out.push('\n');
    out
}

/// [`print()`] to any writer.
fn write_to(out: &mut impl Write, text: &str) -> io::Result<()> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader went away after `room` bytes, or that fails otherwise.
    struct Pipe {
        room: usize,
        error: io::ErrorKind,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(self.error.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        assert_eq!(csv_line(&["a", "1.5", ""]), "a,1.5,\n");
        assert_eq!(
            csv_line(&[
                "NO: frame 3: created: 1, expected 2",
                "say \"hi\"",
                "two\nlines"
            ]),
            "\"NO: frame 3: created: 1, expected 2\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
        );
    }

    #[test]
    fn a_closed_pipe_ends_the_output_quietly() {
        let mut pipe = Pipe {
            room: 5,
            error: io::ErrorKind::BrokenPipe,
        };
        assert!(write_to(&mut pipe, "scenes:\n  uniform\n").is_ok());
    }

    #[test]
    fn other_failures_are_reported() {
        let mut full = Pipe {
            room: 5,
            error: io::ErrorKind::StorageFull,
        };
        let e = write_to(&mut full, "scenes:\n  uniform\n").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }
}
