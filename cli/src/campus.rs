//! `harness campus`: sign in to the campus account, see which services have a session, send a
//! campus request as a plugin would (for plugin authors), sign out — and run the campus
//! simulator on this machine. `HARNESS_CAMPUS_ORIGIN=http://127.0.0.1:P` sends every campus
//! request to that origin instead of the campus hosts (development only).

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use clap::Subcommand;
use harness_core::Engine;
use harness_core::campus::wire::{Origin, Public, Service};
use harness_core::campus::{CampusRequest, SecondFactor, SignInStep};
use serde_json::Value;

#[derive(Subcommand)]
pub enum CampusCommand {
    /// Sign in with the student id; the password is read from standard input.
    SignIn {
        #[arg(long)]
        user: String,
        /// Keep the password in the keyring, to sign in again when a session ends.
        #[arg(long)]
        remember: bool,
        /// The SMS code, for scripts (else it is asked on the terminal).
        #[arg(long)]
        sms_code: Option<String>,
        /// The authenticator's code, for scripts.
        #[arg(long)]
        otp: Option<String>,
    },
    /// Which services are signed in, and until when.
    Status,
    /// What a plugin's request to SERVICE (portal, card, treehole; public, library: no
    /// session) would get.
    Request {
        service: String,
        path: String,
        #[arg(long)]
        method: Option<String>,
        /// A JSON body.
        #[arg(long)]
        body: Option<String>,
        /// A form field, KEY=VALUE, sent form-encoded in the order given (repeat it for each
        /// field); not with --body.
        #[arg(long, value_name = "KEY=VALUE")]
        form: Vec<String>,
    },
    /// Sign in again only the services the last sign-in could not, with the remembered
    /// password.
    Retry,
    /// Answer a check a service asks after the sign-in: `treehole`, Treehole's own SMS check
    /// (SERVICES.md §3), or `grades`, the course API's authorization (§9, 获取授权码). --send
    /// sends the SMS; --code answers with its code, or with the authenticator's (手机令牌) under
    /// --otp.
    Verify {
        check: String,
        #[arg(long)]
        send: bool,
        #[arg(long)]
        code: Option<String>,
        /// The code is the authenticator's, not an SMS one.
        #[arg(long)]
        otp: bool,
    },
    /// Sign out: every session and the remembered password are deleted.
    SignOut,
    /// Run the campus simulator on 127.0.0.1:PORT until interrupted.
    Simulate {
        #[arg(long, default_value_t = 8787)]
        port: u16,
        /// Vary the wire as HTTP allows, comma-separated: relative, 303, gzip, extra-hop,
        /// cookie-attrs, captcha-after-wrong-password, flaky:SERVICE, maintenance:SERVICE,
        /// slow:SERVICE (an answer held just past the client's 10 s timeout; SERVICE: portal,
        /// card, treehole).
        #[arg(long, value_name = "VARIATIONS")]
        vary: Option<String>,
    },
}

/// IAAA's captcha, answered on the terminal: the picture is written to `captcha.jpg` in the data
/// directory for the student to open, its characters read, the file removed. Characters IAAA
/// does not take are said, with a new picture to read.
async fn captcha(engine: &Engine, data_dir: &Path) -> Result<SignInStep, String> {
    let campus = engine.campus();
    let path = data_dir.join("captcha.jpg");
    loop {
        let (_, image) = campus
            .captcha()
            .ok_or("no sign-in is waiting for a captcha; start the sign-in again")?;
        std::fs::write(&path, &image).map_err(|e| {
            format!(
                "the captcha could not be written to {}: {e}",
                path.display()
            )
        })?;
        let characters = read_line(&format!(
            "IAAA asks for its captcha: open {} and type its characters: ",
            path.display()
        ))?;
        let answered = campus.submit_captcha(&characters).await;
        let _ = std::fs::remove_file(&path);
        match answered {
            Err(harness_core::campus::CampusError::CaptchaWrong) => {
                eprintln!("the captcha's characters were not right; here is a new picture");
            }
            done => return done.map_err(|e| e.to_string()),
        }
    }
}

/// What a sign-in ended with, as the terminal says it.
fn said(user: &str, step: &SignInStep) -> String {
    match step {
        SignInStep::SignedIn { services } => {
            format!("signed in as {user}: {}", services.join(", "))
        }
        SignInStep::Partly { services, failed } => {
            let mut lines = vec![format!(
                "signed in as {user}: {}",
                if services.is_empty() {
                    "no service".to_owned()
                } else {
                    services.join(", ")
                }
            )];
            for failure in failed {
                lines.push(format!(
                    "  {}: not signed in: {}",
                    failure.service.as_str(),
                    failure.error
                ));
            }
            lines.push(
                "run `harness campus retry` to sign in only those (it needs --remember), or sign in again".into(),
            );
            lines.join("\n")
        }
        SignInStep::NeedsCode { .. } => format!("{user}: IAAA waits for a code"),
        SignInStep::NeedsCaptcha => format!("{user}: IAAA waits for its captcha"),
    }
}

/// The campus origin of this run: the simulator's when `HARNESS_CAMPUS_ORIGIN` names one.
pub fn origin() -> Result<Origin, String> {
    match std::env::var("HARNESS_CAMPUS_ORIGIN") {
        Ok(raw) if !raw.is_empty() => Origin::development(&raw),
        _ => Ok(Origin::campus()),
    }
}

fn open(data_dir: &Path) -> Result<Engine, String> {
    crate::open::engine(data_dir, Arc::new(crate::tools::NoPrompts))
}

fn read_line(prompt: &str) -> Result<String, String> {
    if !prompt.is_empty() {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

pub async fn run(data_dir: &Path, command: CampusCommand) -> Result<(), String> {
    match command {
        CampusCommand::Simulate { port, vary } => {
            let varied = harness_campus_sim::Vary::parse_list(vary.as_deref().unwrap_or(""))?;
            let sim = harness_campus_sim::Simulator::start(port)
                .await
                .map_err(|e| {
                    format!("the campus simulator could not listen on port {port}: {e}")
                })?;
            for v in varied {
                outln!("varying the wire: {v:?}");
                sim.vary(v);
            }
            outln!(
                "campus simulator at {} (set HARNESS_CAMPUS_ORIGIN to it)",
                sim.origin()
            );
            outln!(
                "demo student: {} / {}",
                harness_campus_sim::DEMO.id,
                harness_campus_sim::DEMO.password
            );
            // Serves until the process is interrupted.
            std::future::pending::<()>().await;
            Ok(())
        }
        CampusCommand::SignIn {
            user,
            remember,
            sms_code,
            otp,
        } => {
            let engine = open(data_dir)?;
            let password = read_line("password: ")?;
            let mut step = engine
                .campus()
                .sign_in(&user, &password, remember)
                .await
                .map_err(|e| e.to_string())?;
            loop {
                let factor = match step {
                    SignInStep::NeedsCode { factor } => factor,
                    SignInStep::NeedsCaptcha => {
                        step = captcha(&engine, data_dir).await?;
                        continue;
                    }
                    _ => break,
                };
                let code = match (&factor, &sms_code, &otp) {
                    (SecondFactor::Sms { .. }, Some(code), _) => code.clone(),
                    (SecondFactor::Otp, _, Some(code)) => code.clone(),
                    (SecondFactor::Sms { mobile_mask }, None, _) => {
                        read_line(&format!("SMS code sent to {mobile_mask}: "))?
                    }
                    (SecondFactor::Otp, _, None) => read_line("authenticator (手机令牌) code: ")?,
                };
                step = engine
                    .campus()
                    .submit_code(&code)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            outln!("{}", said(&user, &step));
            Ok(())
        }
        CampusCommand::Retry => {
            let engine = open(data_dir)?;
            let step = engine.campus().retry().await.map_err(|e| e.to_string())?;
            let user = engine
                .campus()
                .status()
                .map_err(|e| e.to_string())?
                .account
                .unwrap_or_default();
            outln!("{}", said(&user, &step));
            Ok(())
        }
        CampusCommand::Verify {
            check,
            send,
            code,
            otp,
        } => verify(data_dir, &check, send, code, otp).await,
        CampusCommand::Status => {
            let engine = open(data_dir)?;
            let status = engine.campus().status().map_err(|e| e.to_string())?;
            match status.account {
                None => outln!("not signed in"),
                Some(account) => {
                    outln!("signed in as {account}");
                    for (service, until) in status.services {
                        match until {
                            Some(ms) => outln!("  {}: until {}", service.as_str(), local(ms)),
                            None => outln!("  {}: signed in", service.as_str()),
                        }
                    }
                }
            }
            Ok(())
        }
        CampusCommand::Request {
            service,
            path,
            method,
            body,
            form,
        } => {
            let body: Option<Value> = body
                .map(|b| serde_json::from_str(&b).map_err(|e| format!("--body is not JSON: {e}")))
                .transpose()?;
            let form = form
                .iter()
                .map(|field| match field.split_once('=') {
                    Some((key, value)) => Ok((key.to_owned(), value.to_owned())),
                    None => Err(format!("--form takes KEY=VALUE, not {field:?}")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let request = CampusRequest {
                method,
                path,
                query: Vec::new(),
                body,
                form,
            };
            let engine = open(data_dir)?;
            let campus = engine.campus();
            let answer = match (Service::parse(&service), Public::parse(&service)) {
                (Some(named), _) => campus.request(named, &request).await,
                (None, Some(public)) => campus.public_request(public, &request).await,
                (None, None) => {
                    return Err(format!(
                        "{service} is not a campus service: give portal, card, treehole, public or library"
                    ));
                }
            }
            .map_err(|e| e.to_string())?;
            outln!(
                "{}",
                serde_json::to_string_pretty(&answer).unwrap_or_default()
            );
            Ok(())
        }
        CampusCommand::SignOut => {
            let engine = open(data_dir)?;
            engine.campus().sign_out().map_err(|e| e.to_string())?;
            outln!("signed out of the campus account");
            Ok(())
        }
    }
}

/// `harness campus verify`: sends or answers Treehole's SMS check or the course API's
/// authorization, as their screens do.
async fn verify(
    data_dir: &Path,
    check: &str,
    send: bool,
    code: Option<String>,
    otp: bool,
) -> Result<(), String> {
    let grades = match check {
        "treehole" => false,
        "grades" => true,
        other => {
            return Err(format!(
                "{other} is not a check: give treehole (its SMS check) or grades (the course API's authorization)"
            ));
        }
    };
    if !send && code.is_none() {
        return Err("give --send to send the SMS, or --code C to answer with a code".into());
    }
    let engine = open(data_dir)?;
    let campus = engine.campus();
    if send {
        if grades {
            campus.grades_send_code().await
        } else {
            campus.treehole_send_code().await
        }
        .map_err(|e| e.to_string())?;
        outln!("the SMS code was sent: answer with `harness campus verify {check} --code C`");
    }
    let Some(code) = code else {
        return Ok(());
    };
    match (grades, otp) {
        (true, false) => campus.grades_verify(&code).await,
        (true, true) => campus.grades_verify_otp(&code).await,
        (false, false) => campus.treehole_verify(&code).await,
        (false, true) => campus.treehole_verify_otp(&code).await,
    }
    .map_err(|e| e.to_string())?;
    outln!(
        "{}",
        if grades {
            "the course API's authorization is done: grades can be read"
        } else {
            "Treehole's check is done"
        }
    );
    Ok(())
}

fn local(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}
