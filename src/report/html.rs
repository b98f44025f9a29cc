//! `report.html`: the report as one self-contained page — the Markdown of `report.md` turned
//! into HTML (headings, paragraphs, lists, tables), every plot inlined as SVG, every table
//! sortable by a click on its header (a small inline script), no file or network fetched.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px}\
th{background:#f2f2f2;cursor:pointer;user-select:none}th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}\
td.num{text-align:right;font-variant-numeric:tabular-nums}code{background:#f4f4f4;padding:0 3px}\
.plot svg{max-width:100%;height:auto}.warn{color:#a00}";

/// Sorts a table by the clicked column: numbers (with units and marks) by value, text by name.
const SCRIPT: &str = r#"
function lbValue(t){var m=t.replace(/,/g,'').match(/-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?/);if(!m)return null;var v=parseFloat(m[0]);
var u={'ns':1,'µs':1e3,'ms':1e6,' s':1e9,'kop/s':1e3,'Mop/s':1e6,'Gop/s':1e9};for(var k in u){if(t.indexOf(k)>=0){v*=u[k];break;}}return v;}
document.querySelectorAll('table.sortable').forEach(function(tb){var ths=tb.querySelectorAll('th');ths.forEach(function(th,i){th.addEventListener('click',function(){
var asc=!th.classList.contains('asc');ths.forEach(function(h){h.classList.remove('asc','desc');});th.classList.add(asc?'asc':'desc');
var body=tb.tBodies[0];var rows=Array.prototype.slice.call(body.rows);rows.sort(function(a,b){var x=a.cells[i].textContent,y=b.cells[i].textContent;
var vx=lbValue(x),vy=lbValue(y);var c=(vx!==null&&vy!==null)?vx-vy:x.localeCompare(y);return asc?c:-c;});rows.forEach(function(r){body.appendChild(r);});});});});
"#;

/// Writes `out/report.html` from the report's Markdown, inlining the plots it links.
pub fn write(out: &Path, md: &str) -> Result<()> {
    let mut html =
        String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = writeln!(
        html,
        "<title>lockbench report</title><style>{STYLE}</style></head><body>"
    );
    html.push_str(&body(out, md));
    let _ = writeln!(html, "<script>{SCRIPT}</script>\n</body></html>");
    let path = out.join("report.html");
    crate::opts::io::write_atomic(&path, html.as_bytes())
}

/// The HTML of the Markdown's blocks.
fn body(out: &Path, md: &str) -> String {
    let mut html = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.is_empty() {
            i += 1;
        } else if let Some(h) = heading(line) {
            html.push_str(&h);
            i += 1;
        } else if line.starts_with("![") {
            html.push_str(&image(out, line));
            i += 1;
        } else if line.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].starts_with('|') {
                i += 1;
            }
            html.push_str(&table(&lines[start..i]));
        } else if line.starts_with("- ") {
            html.push_str("<ul>");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = write!(html, "<li>{}</li>", inline(&lines[i][2..]));
                i += 1;
            }
            html.push_str("</ul>\n");
        } else {
            let mut para = Vec::new();
            while i < lines.len() {
                let l = lines[i].trim_end();
                if l.is_empty() || l.starts_with('|') || l.starts_with("![") || heading(l).is_some()
                {
                    break;
                }
                para.push(inline(l.trim_end_matches("  ")));
                i += 1;
            }
            let _ = writeln!(html, "<p>{}</p>", para.join("<br>"));
        }
    }
    html
}

fn heading(line: &str) -> Option<String> {
    let level = line.chars().take_while(|c| *c == '#').count();
    (1..=4).contains(&level).then_some(())?;
    let text = line[level..].strip_prefix(' ')?;
    Some(format!("<h{level}>{}</h{level}>\n", inline(text)))
}

/// An image line: the SVG inlined when it is one of the report's plots, else a link.
fn image(out: &Path, line: &str) -> String {
    let alt = line[2..].split(']').next().unwrap_or("");
    let src = line
        .split("](")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or("");
    let inside_out = !src.contains("..") && !src.starts_with('/');
    match crate::opts::io::read_text(&out.join(src), crate::opts::io::RESULTS_CAP) {
        Ok(svg) if inside_out && src.ends_with(".svg") => {
            let svg = match svg.find("<svg") {
                Some(at) => &svg[at..],
                None => &svg,
            };
            format!(
                "<figure class=\"plot\" aria-label=\"{}\">{svg}</figure>\n",
                escape(alt)
            )
        }
        _ => format!("<p>[{}: {}]</p>\n", escape(alt), escape(src)),
    }
}

/// A Markdown table (header, rule, rows) as a sortable HTML table.
fn table(rows: &[&str]) -> String {
    let cells = |r: &str| -> Vec<String> {
        let inner = r.trim().trim_start_matches('|').trim_end_matches('|');
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'|') => {
                    cur.push('|');
                    chars.next();
                }
                '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
                _ => cur.push(c),
            }
        }
        out.push(cur.trim().to_string());
        out
    };
    let mut html = String::from("<table class=\"sortable\"><thead><tr>");
    for h in cells(rows[0]) {
        let _ = write!(html, "<th>{}</th>", inline(&h));
    }
    html.push_str("</tr></thead><tbody>\n");
    let right: Vec<bool> = rows
        .get(1)
        .map(|r| cells(r).iter().map(|c| c.ends_with(':')).collect())
        .unwrap_or_default();
    for r in rows.iter().skip(2) {
        html.push_str("<tr>");
        for (j, c) in cells(r).iter().enumerate() {
            let class = if right.get(j).copied().unwrap_or(false) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(html, "<td{class}>{}</td>", inline(c));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    html
}

/// Inline Markdown: `code` and **bold**, the rest escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            for (j, p) in escape(part).split("**").enumerate() {
                if j % 2 == 1 {
                    let _ = write!(out, "<strong>{p}</strong>");
                } else {
                    out.push_str(p);
                }
            }
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn markdown_becomes_self_contained_html() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("plots")).unwrap();
        fs::write(
            dir.path().join("plots/a.svg"),
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><text>hi</text></svg>",
        )
        .unwrap();
        let md = "# Title\n\nSome **bold** and `code` <here>.  \nnext line\n\n![a plot](plots/a.svg)\n\n| lock | thr |\n|---|---:|\n| a\\|b | 2 |\n| c | 10 |\n\n- one\n- two\n";
        write(dir.path(), md).unwrap();
        let html = fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(html.contains("<h1>Title</h1>"));
        assert!(
            html.contains("<strong>bold</strong> and <code>code</code> &lt;here&gt;.<br>next line")
        );
        assert!(html.contains("<figure class=\"plot\" aria-label=\"a plot\"><svg"));
        assert!(
            !html.contains("<?xml"),
            "the plot is inlined without its declaration"
        );
        assert!(html.contains("<td>a|b</td><td class=\"num\">2</td>"));
        assert!(html.contains("<ul><li>one</li><li>two</li></ul>"));
        assert!(html.contains("table.sortable"));
        // Nothing is fetched: no src or href to anything.
        assert!(!html.contains("src=") && !html.contains("href="));
    }
}
