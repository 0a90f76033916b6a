"""Workers past one machine: processes that lease jobs from the PostgreSQL work queue
(:mod:`oddtrick_referee.storage.work_queue`), do them and record the results."""
