-- 0008: a commit's conditions are checked by the server (issue 28). A
-- conditional statement of a commit reports how many rows it touched to
-- interlock_expect, which fails the statement — and so the whole commit,
-- sent as one implicit transaction — when the count is not the one
-- required (the client names the record: it knows which statement
-- failed). The client then learns of a conflict from the error instead
-- of counting rows itself between the statements and a COMMIT of its own:
-- that extra round trip held every lock the commit took, the event
-- shard's counter row among them, for as long as the client took to read
-- the results and answer, and under CPU contention the commits of one
-- shard queued behind it.
CREATE FUNCTION interlock_expect(got bigint, want bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF got <> want THEN
        RAISE EXCEPTION USING ERRCODE = 'IL409', MESSAGE = format('condition not met: %s rows, %s required', got, want);
    END IF;
END
$$;
