-- herd results store, schema version 9.
--
-- `cell.control_of`: the key of the cell this cell is the A/A twin of (`[runner] controls =
-- N`): the same configuration run again, as a cell of its own, so that the report can say
-- how far two identical sets of runs come apart on this machine (the noise floor). Its axis
-- values are its original's; NULL for every cell of the matrix itself, and in older stores.
ALTER TABLE cell ADD COLUMN control_of TEXT;
