//! The advisor view's state: the container advised on, the workload and candidates the user
//! chose (written as on the command line), the run in progress candidate by candidate, the
//! advice (the same value `advise --json` prints), and the candidate picked for a copy.

use crate::advisor::{Advice, Progress};

/// What a prompt of the advisor view asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdvisorField {
    /// A bundled suite, a workload or suite file path; empty: the container's own suite.
    Workload,
    /// `--candidates` as on the command line; empty: proposed from the items.
    Candidates,
    /// The name of the re-partitioned copy of the selected candidate.
    CopyName,
}

/// One candidate's stage in a run: what it is doing now, or done.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub candidate: String,
    pub doing: String,
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Default)]
pub struct AdvisorState {
    /// The container advised on (database, container).
    pub target: Option<(String, String)>,
    pub workload: String,
    pub candidates: String,
    /// Reading, then one stage per candidate as the run reaches it.
    pub reading: Option<(u64, u64)>,
    pub stages: Vec<Stage>,
    pub advice: Option<Advice>,
    /// The candidate column selected (an index into the advice's candidates, best first).
    pub selected: usize,
    /// The first row of the comparison shown.
    pub scroll: usize,
    /// The view's job (the advisor or a copy) by ticket, once started; the one asked
    /// for, until the router has started it.
    pub job: Option<(u64, AdvisorJob)>,
    pub pending: Option<AdvisorJob>,
    /// Why the last run or copy failed.
    pub error: Option<String>,
    /// The name the copy prompt offers, and the copies made this session.
    pub copy_name: String,
    pub copied: Vec<String>,
}

/// Which of the view's jobs runs.
#[derive(Debug, Clone, PartialEq)]
pub enum AdvisorJob {
    Advise,
    Copy { db: String, container: String },
}

impl AdvisorState {
    /// Takes a progress report of the run: the stage of the candidate it names moves on
    /// (a new candidate starts a stage of its own).
    pub fn on_progress(&mut self, p: &Progress) {
        let (candidate, doing, done, total) = match p {
            Progress::Reading { done, total } => {
                self.reading = Some((*done, *total));
                return;
            }
            Progress::Copying {
                candidate,
                done,
                total,
            } => (candidate, "copying".to_string(), *done, *total),
            Progress::Replaying {
                candidate,
                pattern,
                done,
                total,
            } => (candidate, format!("replaying {pattern}"), *done, *total),
        };
        let stage = Stage {
            candidate: candidate.clone(),
            doing,
            done,
            total,
        };
        match self.stages.last_mut() {
            Some(last) if last.candidate == *candidate => *last = stage,
            _ => self.stages.push(stage),
        }
    }

    /// Whether the view's advisor run is the job running now.
    pub fn advising(&self, job: Option<&super::Job>) -> bool {
        matches!(&self.job, Some((t, AdvisorJob::Advise)) if job.is_some_and(|j| j.ticket == *t))
    }

    /// The workload as the view names it.
    pub fn workload_label(&self) -> String {
        if self.workload.is_empty() {
            "the container's sample suite, if it has one".into()
        } else {
            self.workload.clone()
        }
    }

    /// What a prompt of the view fills in with: what it edits now.
    pub fn field_text(&self, field: &AdvisorField) -> String {
        match field {
            AdvisorField::Workload => self.workload.clone(),
            AdvisorField::Candidates => self.candidates.clone(),
            AdvisorField::CopyName => self.copy_name.clone(),
        }
    }

    /// The selected candidate's assessment, once there is advice.
    pub fn selected_candidate(&self) -> Option<&crate::advisor::Assessment> {
        self.advice.as_ref()?.candidates.get(self.selected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_candidate_gets_a_stage_that_moves_on() {
        let mut a = AdvisorState::default();
        a.on_progress(&Progress::Reading { done: 5, total: 5 });
        let copying = |c: &str, done| Progress::Copying {
            candidate: c.into(),
            done,
            total: 5,
        };
        a.on_progress(&copying("/id", 2));
        a.on_progress(&Progress::Replaying {
            candidate: "/id".into(),
            pattern: "q1".into(),
            done: 3,
            total: 10,
        });
        a.on_progress(&copying("/userId", 1));
        assert_eq!(a.reading, Some((5, 5)));
        let stages: Vec<(&str, &str, u64)> = a
            .stages
            .iter()
            .map(|s| (s.candidate.as_str(), s.doing.as_str(), s.done))
            .collect();
        assert_eq!(
            stages,
            [("/id", "replaying q1", 3), ("/userId", "copying", 1)]
        );
    }
}
