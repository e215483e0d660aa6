//! docs/run-json.schema.json checked by Python's `jsonschema` (the reference implementation of
//! draft 2020-12), in the venv scripts/test.sh makes for the Kubernetes schema checks, which
//! has it already. One Python process per validator, one line of JSON in and out per
//! document: its start-up is paid once per test, and the test build no longer compiles a
//! JSON Schema crate and its regex engines (about 45 s of a 2-core build).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

/// The schema is checked against its meta-schema first; then each line is a document, each
/// answer a JSON list of its errors, each "message at /path".
const SCRIPT: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
v = Draft202012Validator(schema)
print("ready", flush=True)
for line in sys.stdin:
    doc = json.loads(line)
    errors = ["%s at /%s" % (e.message, "/".join(str(p) for p in e.absolute_path))
              for e in v.iter_errors(doc)]
    print(json.dumps(errors), flush=True)
"#;

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/run-json.schema.json");

/// A running validator of herd.run.v1 documents.
pub struct RunJsonSchema {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

/// The venv's Python: `HERD_JSONSCHEMA_PYTHON` (scripts/test.sh sets it), else the venv
/// scripts/test.sh makes under target/. Missing, the test fails with what to do: it never
/// skips.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("HERD_JSONSCHEMA_PYTHON") {
        return PathBuf::from(p);
    }
    let venv =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/k8s-validate/bin/python3");
    assert!(
        venv.exists(),
        "no Python with jsonschema: run scripts/test.sh once (it makes {}), or set \
         HERD_JSONSCHEMA_PYTHON to a python3 that has jsonschema >= 4.18",
        venv.display()
    );
    venv
}

impl RunJsonSchema {
    /// Starts the validator; panics (the test fails) if the schema is not a valid draft
    /// 2020-12 schema or Python cannot check it.
    pub fn start() -> RunJsonSchema {
        let python = python();
        let mut child = Command::new(&python)
            .args(["-c", SCRIPT, SCHEMA])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        output.read_line(&mut ready).unwrap();
        assert_eq!(ready.trim(), "ready", "the schema is not a valid draft 2020-12 schema (above)");
        RunJsonSchema { child, input, output }
    }

    /// What the schema finds wrong with `doc` (empty: valid).
    pub fn errors(&mut self, doc: &Value) -> Vec<String> {
        let mut line = serde_json::to_string(doc).unwrap();
        line.push('\n');
        self.input.write_all(line.as_bytes()).unwrap();
        let mut answer = String::new();
        self.output.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("the validator said {answer:?}: {e}"))
    }

    pub fn is_valid(&mut self, doc: &Value) -> bool {
        self.errors(doc).is_empty()
    }
}

impl Drop for RunJsonSchema {
    fn drop(&mut self) {
        // Our own child, stopped by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
