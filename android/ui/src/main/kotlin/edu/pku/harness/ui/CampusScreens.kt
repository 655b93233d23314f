package edu.pku.harness.ui

import androidx.compose.foundation.Image
import androidx.compose.foundation.layout.Arrangement
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.layout.fillMaxWidth
import androidx.compose.foundation.layout.heightIn
import androidx.compose.foundation.text.KeyboardOptions
import androidx.compose.material3.Button
import androidx.compose.material3.Checkbox
import androidx.compose.material3.OutlinedTextField
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.ExperimentalComposeUiApi
import androidx.compose.ui.Modifier
import androidx.compose.ui.autofill.AutofillNode
import androidx.compose.ui.autofill.AutofillType
import androidx.compose.ui.composed
import androidx.compose.ui.focus.onFocusChanged
import androidx.compose.ui.layout.boundsInWindow
import androidx.compose.ui.layout.onGloballyPositioned
import androidx.compose.ui.platform.LocalAutofill
import androidx.compose.ui.platform.LocalAutofillTree
import androidx.compose.ui.platform.testTag
import androidx.compose.ui.text.font.FontWeight
import androidx.compose.ui.text.input.KeyboardType
import androidx.compose.ui.text.input.PasswordVisualTransformation
import androidx.compose.ui.unit.dp
import edu.pku.harness.core.Action
import edu.pku.harness.core.CampusAccountScreen
import edu.pku.harness.core.CampusCheckScreen

/** Test tags of the campus screens. */
object CampusTags {
    const val STUDENT_ID = "campus-student-id"
    const val PASSWORD = "campus-password"
    const val REMEMBER = "campus-remember"
    const val SIGN_IN = "campus-sign-in"
    const val CODE = "campus-code"
    const val SUBMIT_CODE = "campus-submit-code"
    const val CAPTCHA_IMAGE = "campus-captcha-image"
    const val CAPTCHA = "campus-captcha"
    const val SUBMIT_CAPTCHA = "campus-submit-captcha"
    const val ACCOUNT = "campus-account"
    const val CHECK_CODE = "campus-check-code"
    const val CHECK_SUBMIT = "campus-check-submit"
    const val CHECK_SUBMIT_OTP = "campus-check-submit-otp"
}

/**
 * The campus account as the core shows it: the sign-in form (the password in a secure field,
 * handed to the core in the tap and never kept here), the code IAAA asks for, or the account
 * signed in with each service's state (signed in, or what failed), "Retry" for the failed ones
 * and "Sign out".
 */
@Composable
fun CampusAccountPage(holder: ScreenModel<CampusAccountScreen>) {
    val screen = holder.model ?: return
    val act: (Action) -> Unit = { holder.act(it) }
    Page(holder.message) {
        Title(screen.title)
        Small(screen.explanation)
        screen.form?.let { form ->
            var user by remember { mutableStateOf("") }
            var password by remember { mutableStateOf("") }
            var remember by remember { mutableStateOf(false) }
            OutlinedTextField(user, { user = it }, label = { Text(form.studentIdLabel) }, singleLine = true,
                keyboardOptions = KeyboardOptions(keyboardType = KeyboardType.Number),
                modifier = Modifier.fillMaxWidth().testTag(CampusTags.STUDENT_ID))
            OutlinedTextField(password, { password = it }, label = { Text(form.passwordLabel) }, singleLine = true,
                visualTransformation = PasswordVisualTransformation(),
                keyboardOptions = KeyboardOptions(keyboardType = KeyboardType.Password),
                modifier = Modifier.fillMaxWidth().testTag(CampusTags.PASSWORD))
            Row(verticalAlignment = Alignment.CenterVertically) {
                Checkbox(remember, { remember = it }, modifier = Modifier.testTag(CampusTags.REMEMBER))
                Text(form.rememberLabel)
            }
            Small(form.rememberHint)
            Button(
                onClick = {
                    act(Action.CampusSignIn(user.trim(), password, remember))
                    // The password goes to the core with the tap; the screen keeps none of it.
                    password = ""
                },
                modifier = Modifier.testTag(CampusTags.SIGN_IN),
            ) { Text(form.submitLabel) }
        }
        screen.code?.let { step ->
            var code by remember(step.account, step.prompt) { mutableStateOf("") }
            Text(step.prompt)
            OutlinedTextField(code, { code = it }, label = { Text(step.codeLabel) }, singleLine = true,
                keyboardOptions = KeyboardOptions(keyboardType = KeyboardType.NumberPassword),
                modifier = Modifier.fillMaxWidth().oneTimeCode { code = it }.testTag(CampusTags.CODE))
            Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                Button(onClick = { act(Action.CampusSubmitCode(code.trim())) }, modifier = Modifier.testTag(CampusTags.SUBMIT_CODE)) {
                    Text(step.submitLabel)
                }
                step.resend?.let { CoreButton(it, onAct = act) }
                CoreButton(step.cancel, onAct = act)
            }
            step.resendWait?.let { Small(it) }
        }
        screen.captcha?.let { step ->
            var characters by remember(step.account, step.image) { mutableStateOf("") }
            Text(step.prompt)
            // The core hands over only a picture whose header it read; the phone's decoder draws it.
            val decode = LocalPictures.current
            val picture = remember(step.image) { step.image?.let(decode) }
            picture?.let {
                Image(it, contentDescription = step.codeLabel,
                    modifier = Modifier.heightIn(max = 60.dp).testTag(CampusTags.CAPTCHA_IMAGE))
            }
            OutlinedTextField(characters, { characters = it }, label = { Text(step.codeLabel) }, singleLine = true,
                modifier = Modifier.fillMaxWidth().testTag(CampusTags.CAPTCHA))
            Row(horizontalArrangement = Arrangement.spacedBy(8.dp)) {
                Button(onClick = { act(Action.CampusSubmitCaptcha(characters.trim())) }, modifier = Modifier.testTag(CampusTags.SUBMIT_CAPTCHA)) {
                    Text(step.submitLabel)
                }
                CoreButton(step.refresh, onAct = act)
                CoreButton(step.cancel, onAct = act)
            }
        }
        screen.signedIn?.let { signed ->
            Card(Modifier.testTag(CampusTags.ACCOUNT)) {
                Row {
                    Text(signed.accountLabel, modifier = Modifier.weight(1f))
                    Text(signed.account, fontWeight = FontWeight.Medium)
                }
                for (service in signed.services) {
                    Row {
                        Text(service.label, modifier = Modifier.weight(1f))
                        Small(service.value)
                    }
                }
            }
            signed.retry?.let { CoreButton(it, onAct = act) }
            CoreButton(signed.signOut, onAct = act)
        }
    }
}

/**
 * A campus check (Treehole's SMS check, the course API's authorization for grades): send the
 * code, then enter it, or the authenticator's code — a step only the student can take. The
 * screen names its check, which the actions made from the code typed carry.
 */
@Composable
fun CampusCheckPage(holder: ScreenModel<CampusCheckScreen>) {
    val screen = holder.model ?: return
    var code by remember { mutableStateOf("") }
    Page(holder.message) {
        Title(screen.title)
        Text(screen.explanation)
        CoreButton(screen.send) { holder.act(it) }
        OutlinedTextField(code, { code = it }, label = { Text(screen.codeLabel) }, singleLine = true,
            keyboardOptions = KeyboardOptions(keyboardType = KeyboardType.NumberPassword),
            modifier = Modifier.fillMaxWidth().oneTimeCode { code = it }.testTag(CampusTags.CHECK_CODE))
        Button(onClick = { holder.act(Action.CampusCheckVerify(screen.check, code.trim())) }, modifier = Modifier.testTag(CampusTags.CHECK_SUBMIT)) {
            Text(screen.submitLabel)
        }
        Button(onClick = { holder.act(Action.CampusCheckVerifyOtp(screen.check, code.trim())) }, modifier = Modifier.testTag(CampusTags.CHECK_SUBMIT_OTP)) {
            Text(screen.otpSubmitLabel)
        }
    }
}

/** The platform's one-time-code autofill for this field (Android offers the SMS just received). */
@OptIn(ExperimentalComposeUiApi::class)
private fun Modifier.oneTimeCode(onFill: (String) -> Unit): Modifier = composed {
    val node = remember { AutofillNode(autofillTypes = listOf(AutofillType.SmsOtpCode), onFill = onFill) }
    val autofill = LocalAutofill.current
    LocalAutofillTree.current += node
    onGloballyPositioned { node.boundingBox = it.boundsInWindow() }
        .onFocusChanged { if (it.isFocused) autofill?.requestAutofillForNode(node) else autofill?.cancelAutofillForNode(node) }
}
