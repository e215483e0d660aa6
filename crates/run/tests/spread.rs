//! The coordinator and agents as a library, without a server to load: an agent that never
//! comes times the barrier out with a clear error (and the agent that came is told to stop),
//! and an agent with other settings is refused at its hello, the run saying why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::{NonZeroU32, NonZeroU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herd_engine::{Control, Slice};
use herd_run::plan::{Load, Pace, Stop};
use herd_run::spread::{run_agent, Address, AgentEnv, Coordinator, SpreadError};
use herd_run::RunPlan;

fn plan(requests: u64) -> RunPlan {
    RunPlan::new(
        "http://127.0.0.1:1/".parse().unwrap(),
        Load::Single {
            connections: NonZeroU32::new(2).unwrap(),
            stop: Stop::Requests(NonZeroU64::new(requests).unwrap()),
            pace: Pace::Closed { think: None },
        },
    )
}

fn env(index: u32, count: u32, coordinator: Address) -> AgentEnv {
    AgentEnv {
        slice: Slice::new(index, NonZeroU32::new(count).unwrap()).unwrap(),
        coordinator: coordinator.to_string(),
    }
}

#[test]
fn an_agent_that_never_comes_times_the_barrier_out() {
    let coordinator =
        Coordinator::bind(&Address::Tcp("127.0.0.1:0".into()), NonZeroU32::new(2).unwrap())
            .unwrap()
            .arm_timeout(Duration::from_secs(2));
    let address = coordinator.address().unwrap();
    let p = plan(10);
    let agent = {
        let p = p.clone();
        std::thread::spawn(move || {
            run_agent(&p, &env(0, 2, address), &Arc::new(Control::new()), None)
        })
    };
    let t = Instant::now();
    let e = coordinator.run(&p, None, &Control::new(), |_, _, _| {}).unwrap_err();
    let waited = t.elapsed();
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(10), "{waited:?}");
    assert!(matches!(e, SpreadError::Barrier { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("not every agent was armed within 2 s: agent 1 never connected"),
        "{text}"
    );
    assert_eq!(e.unheard_agents(), [1]);
    // The agent that came is told, and ends.
    let agent_end = agent.join().unwrap().unwrap_err().to_string();
    assert!(agent_end.contains("the coordinator stopped the run"), "{agent_end}");
}

/// One agent (`index` of `count`, running `agent_plan`) against a coordinator of two agents
/// running `plan(10)`, over `address`: both ends' errors, as text.
fn refused(agent_plan: RunPlan, index: u32, count: u32, address: Address) -> (String, String) {
    let coordinator = Coordinator::bind(&address, NonZeroU32::new(2).unwrap())
        .unwrap()
        .arm_timeout(Duration::from_secs(20));
    let address = coordinator.address().unwrap();
    let agent = std::thread::spawn(move || {
        run_agent(&agent_plan, &env(index, count, address), &Arc::new(Control::new()), None)
    });
    let e = coordinator.run(&plan(10), None, &Control::new(), |_, _, _| {}).unwrap_err();
    (e.to_string(), agent.join().unwrap().unwrap_err().to_string())
}

#[test]
fn an_agent_with_other_settings_is_refused() {
    let (text, agent_end) = refused(plan(11), 1, 2, Address::Tcp("127.0.0.1:0".into()));
    assert!(text.contains("agent 1: it runs other settings"), "{text}");
    assert!(text.contains("give every agent the same herd run arguments"), "{text}");
    assert!(
        agent_end.contains("the coordinator refused this agent: it runs other settings"),
        "{agent_end}"
    );
}

/// Over a Unix socket too (agents in network namespaces of their own use one).
#[test]
fn an_agent_one_too_many_is_refused() {
    let sock = std::env::temp_dir().join(format!("herd-spread-test-{}.sock", std::process::id()));
    let (text, agent_end) = refused(plan(10), 0, 3, Address::Unix(sock.clone()));
    assert!(text.contains("it is one of 3 agents, the run has 2"), "{text}");
    assert!(agent_end.contains("the coordinator refused this agent"), "{agent_end}");
    assert!(!sock.exists(), "the socket file goes with the coordinator");
}
