-- Report artifacts move to the blob store (issue 46): a new run keeps its artifact's key and size here, its bytes in
-- the store (disk or S3). Runs stored before keep their bytes in `artifact`, and stay readable from there.
alter table report_runs add column artifact_key text;
alter table report_runs add column artifact_size integer;
