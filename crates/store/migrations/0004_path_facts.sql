-- herd results store, schema version 4.
--
-- What a network path's hosts saw during a repetition (herd_lab::netstat::PathFacts as
-- JSON): the link's rate and what was carried, SYN retransmits, failed connects, listen
-- overflows, conntrack use and drops, TIME_WAIT per host, and the plain findings drawn from
-- them (link-bound, conntrack full, port exhaustion). NULL over loopback and in older stores.
ALTER TABLE repetition ADD COLUMN network_json TEXT;
