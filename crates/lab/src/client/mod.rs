//! The client of a cell: herd's own engine (`herd run`), or the real ab or wrk so that a
//! cell can be compared tool to tool. Each client turns a [`ClientJob`] into a command line
//! and its output back into measurements; the lab runs the command.
