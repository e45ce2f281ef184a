use std::io::Read;

use serde_json::json;

use super::*;

fn cols() -> Vec<Col> {
    vec![
        Col {
            name: "url".into(),
            ty: ColType::Text,
        },
        Col {
            name: "status".into(),
            ty: ColType::Int,
        },
        Col {
            name: "score".into(),
            ty: ColType::Float,
        },
    ]
}

#[test]
fn the_format_comes_from_the_flag_or_the_extension() {
    let t = |p: &str, f: Option<&str>| Target::of(Path::new(p), f);
    let x = t("a.csv.gz", None).unwrap();
    assert_eq!(
        (x.format, x.compression),
        (FileFormat::Csv, Compression::Gzip)
    );
    let x = t("a.jsonl.zst", None).unwrap();
    assert_eq!(
        (x.format, x.compression),
        (FileFormat::Jsonl, Compression::Zstd)
    );
    assert_eq!(t("a.out", Some("csv")).unwrap().format, FileFormat::Csv);
    assert_eq!(t("a", None).unwrap().format, FileFormat::Jsonl);
    assert_eq!(t("a.PARQUET", None).unwrap().format, FileFormat::Parquet);
    assert!(
        t("a.parquet.gz", None)
            .unwrap_err()
            .contains("drop the .gz")
    );
    assert!(
        t("a", Some("xml"))
            .unwrap_err()
            .contains("jsonl, csv or parquet")
    );
}

#[test]
fn files_appear_whole_under_their_name_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv.gz");
    let target = Target::of(&path, None).unwrap();
    let mut f = TableFile::create(&target, cols()).unwrap();
    f.row(&[json!("http://a/,\"x\""), json!(200), json!(0.5)])
        .unwrap();
    f.row(&[json!("http://b/"), serde_json::Value::Null, json!(1)])
        .unwrap();
    assert!(!path.exists() && partial_of(&path).exists());
    let w = f.finish().unwrap();
    assert_eq!(w.rows, 2);
    assert!(!partial_of(&path).exists());
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(
        text,
        "url,status,score\r\n\"http://a/,\"\"x\"\"\",200,0.5\r\nhttp://b/,,1\r\n"
    );
    let again = TableFile::create(&target, cols()).err().unwrap();
    assert!(again.contains("exists"), "{again}");
    // Dropped unfinished (an error, Ctrl-C): nothing is left.
    let other = Target::of(&dir.path().join("q.parquet"), None).unwrap();
    let mut f = TableFile::create(&other, cols()).unwrap();
    f.row(&[json!("u"), json!(1), json!(2.0)]).unwrap();
    drop(f);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn parquet_row_groups_read_back_with_their_nulls() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.parquet");
    let target = Target::of(&path, None).unwrap();
    let mut f = TableFile::create(&target, cols()).unwrap();
    let n = super::parquet_file::GROUP_ROWS as u64 + 10;
    for i in 0..n {
        let status = if i % 7 == 0 { json!(null) } else { json!(i) };
        f.row(&[json!(format!("u{i}")), status, json!(i as f64 / 2.0)])
            .unwrap();
    }
    assert_eq!(f.finish().unwrap().rows, n);
    let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(r.metadata().file_metadata().num_rows() as u64, n);
    assert_eq!(r.metadata().num_row_groups(), 2);
    let row = r.get_row_iter(None).unwrap().nth(7).unwrap().unwrap();
    assert_eq!(
        row.to_string(),
        "{url: \"u7\", status: null, score: 3.5}",
        "nulls stay nulls"
    );
}
