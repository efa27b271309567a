-- When a dispatcher last claimed a delivery of the endpoint (issue 16). A delivery waiting its
-- turn behind the per-endpoint limit is not stranded while a dispatcher still claims for its
-- endpoint: the recovery sweep takes a never-claimed delivery only when none has for the claim
-- timeout (no dispatcher runs, or it lost track), and a claimed one whose claim went stale.
alter table webhook_endpoints add column last_claimed_at timestamptz;
