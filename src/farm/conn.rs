//! One synchronous connection to Redis, standalone or cluster, behind one method that
//! runs a pipeline: the bus sends every batch of commands in one round trip.

use std::time::Duration;

use redis::{Cmd, RedisResult, Value};

/// Replies slower than this count as a failure (the bus retries with backoff).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);

pub(crate) enum Conn {
    One(redis::Connection),
    /// Boxed: a cluster connection is four times the size of a standalone one.
    Cluster(Box<redis::cluster::ClusterConnection>),
}

impl Conn {
    /// Connects to a standalone Redis (`cluster` false, first URL) or a cluster.
    pub fn open(urls: &[String], cluster: bool) -> RedisResult<Self> {
        if cluster {
            let client = redis::cluster::ClusterClient::builder(urls.iter().map(String::as_str))
                .connection_timeout(RESPONSE_TIMEOUT)
                .response_timeout(RESPONSE_TIMEOUT)
                .retries(1)
                .build()?;
            Ok(Self::Cluster(Box::new(client.get_connection()?)))
        } else {
            let url = urls.first().map_or("redis://127.0.0.1/", String::as_str);
            let client = redis::Client::open(url)?;
            let c = client.get_connection_with_timeout(RESPONSE_TIMEOUT)?;
            c.set_read_timeout(Some(RESPONSE_TIMEOUT))?;
            c.set_write_timeout(Some(RESPONSE_TIMEOUT))?;
            Ok(Self::One(c))
        }
    }

    /// Runs `cmds` in one pipeline; each reply is `Ok` or that command's error. An `Err`
    /// of the whole call is a connection failure.
    pub fn run(&mut self, cmds: &[Cmd]) -> RedisResult<Vec<RedisResult<Value>>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<Value> = match self {
            Self::One(c) => {
                let mut p = redis::pipe();
                p.ignore_errors();
                for cmd in cmds {
                    p.add_command(cmd.clone());
                }
                p.query(c)?
            }
            Self::Cluster(c) => {
                // The cluster pipeline routes each command to its slot's master.
                let mut p = redis::cluster::cluster_pipe();
                for cmd in cmds {
                    p.add_command(cmd.clone());
                }
                let values: Vec<Value> = p.query(c.as_mut())?;
                values
            }
        };
        Ok(values
            .into_iter()
            .map(|v| match v {
                Value::ServerError(e) => Err(e.into()),
                v => Ok(v),
            })
            .collect())
    }

    /// Runs one command.
    pub fn one(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Self::One(c) => cmd.query(c),
            Self::Cluster(c) => cmd.query(c.as_mut()),
        }
    }
}
