//! The client of a cell: herd's own engine (`herd run`), or the real ab or wrk so that a
//! cell can be compared tool to tool. Each client turns a [`ClientJob`] into a command line
//! and its output back into measurements; the lab runs the command.

// TEMPORARY (replaced by the clients branch)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool { Herd, Ab, Wrk }
impl Tool { pub fn name(self) -> &'static str { match self { Tool::Herd => "herd", Tool::Ab => "ab", Tool::Wrk => "wrk" } } }
impl std::str::FromStr for Tool { type Err = String; fn from_str(s: &str) -> Result<Tool, String> { match s { "herd" => Ok(Tool::Herd), "ab" => Ok(Tool::Ab), "wrk" => Ok(Tool::Wrk), o => Err(format!("unknown client `{o}`: use `herd`, `ab` or `wrk`")) } } }
pub fn supports(_t: Tool, _l: &crate::load::Load, _w: &crate::experiment::WorkloadDef) -> Result<(), String> { Ok(()) }
