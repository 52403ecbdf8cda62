-- 0002: leases (store.Lease): a duty one process holds at a time when
-- several share the store (the watchdog's passes, an alert sink's
-- deliveries). Written with the port's version rule; never expired.
CREATE TABLE leases (
    name    text COLLATE "C" NOT NULL PRIMARY KEY,
    version bigint NOT NULL,
    holder  text   NOT NULL,
    expires bigint
);
